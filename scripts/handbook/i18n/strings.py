"""The words the render step writes itself (badges, labels, notes, generated sections), in each site language.

`t("Verified on {label}", label="CPU")` returns the English template, or its translation while a Chinese page is
being rendered (`with language("zh"):`), formatted with the values. A template with no translation stays English;
`python -m handbook i18n status` lists such templates, and a test fails when one is missing.
"""

from __future__ import annotations

from contextlib import contextmanager

_current = ["en"]

ZH: dict[str, str] = {
    # badges, labels and notes on every page
    "Verified on {label}": "已在 {label} 上验证",
    "{label}: verification failed on {machines}": "{label}：在 {machines} 上验证失败",
    "{label}: verification failed": "{label}：验证失败",
    "{label}: stale — examples changed after the last verification": "{label}：已过期——示例在上次验证后有改动",
    "{label}: no example runs here": "{label}：没有示例在此运行",
    "{label}: not yet verified": "{label}：尚未验证",
    "CPU: {ran} of {total} blocks verified; the main examples need CUDA and did not run": (
        "CPU：{total} 个代码块中已验证 {ran} 个；主要示例需要 CUDA，尚未运行"
    ),
    "Not run: {why}": "未运行：{why}",
    "Not run: needs CUDA. No GPU run of this page is recorded, so this block has no verified output.": (
        "未运行：需要 CUDA。本页尚无 GPU 上的运行记录，所以这个代码块没有经过验证的输出。"
    ),
    "Not run: {reason}.": "未运行：{reason}。",
    "needs CUDA": "需要 CUDA",
    "Output": "输出",
    "Sample output, not compared ({why})": "输出样例，不做比对（{why}）",
    " — measured on {where}": "——测于 {where}",
    "Output depends on the machine": "输出因机器而异",
    "{reason}. No run of this code is recorded yet.": "{reason}。这段代码还没有运行记录。",
    "The output depends on the machine ({reason}). As printed on each machine that ran it:": (
        "输出因机器而异（{reason}）。以下是运行过它的每台机器的输出："
    ),
    "Output on {machine} · torch {torch} · {date}": "{machine} 上的输出 · torch {torch} · {date}",
    "On {machine}": "{machine}",
    "(prints nothing)": "（无输出）",
    "raises {name}": "抛出 {name}",
    "warns {name}": "发出 {name} 警告",
    "not run: {why}": "未运行：{why}",
    "output depends on the machine": "输出因机器而异",
    "{devices} only": "仅 {devices}",
    "Pitfall": "陷阱",
    "TL;DR": "摘要",
    "Also searched as:": "也可搜索：",
    "Not run: needs CUDA (no GPU run is recorded) · show the check": "未运行：需要 CUDA（尚无 GPU 运行记录）· 查看检查代码",
    "Not run: {reason} · show the check": "未运行：{reason} · 查看检查代码",
    "Verification failed on this page · show the check": "本页验证失败 · 查看检查代码",
    "Not verified yet · show the check": "尚未验证 · 查看检查代码",
    "Checked on torch {torch} ({where}) · show how": "已在 torch {torch}（{where}）上检查 · 查看方法",
    "Checked on torch {torch} ({where}) · holds since torch {since} · show how": (
        "已在 torch {torch}（{where}）上检查 · 自 torch {since} 起成立 · 查看方法"
    ),
    "Added in torch {added}": "torch {added} 新增",
    "In torch {added}": "torch {added} 已有",
    # section headings of an api page (the anchors stay the English ones)
    "Official definition": "官方定义",
    "Parameters": "参数",
    "Examples": "示例",
    "Common pitfalls": "常见陷阱",
    "Performance tips": "性能建议",
    "Version history": "版本历史",
    # the official definition
    "Signature (from the installed torch)": "签名（取自已安装的 torch）",
    "Official docstring (from the installed torch, examples left out)": "官方文档字符串（取自已安装的 torch，略去示例）",
    "Upstream reference:": "上游参考文档：",
    # the version history
    "Not probed yet: `python -m handbook versions probe --again` measures it.": (
        "尚未测量：运行 `python -m handbook versions probe --again` 即可测量。"
    ),
    "Measured by running this page against each torch release from {first} to {last} ({n} releases probed).": (
        "对 {first} 到 {last} 的每个 torch 版本运行本页测得（共测量 {n} 个版本）。"
    ),
    "✓ API present · — absent · n/m: blocks (examples and checks) that print or assert what this page shows": (
        "✓ 有此 API · — 无此 API · n/m：输出或断言与本页一致的代码块（示例与检查）"
    ),
    "torch {release}: {api}": "torch {release}：{api}",
    "API present": "有此 API",
    "API absent": "无此 API",
    "not probed": "未测量",
    "; {shown} of {ran} blocks print or assert what this page shows": "；{ran} 个代码块中有 {shown} 个与本页一致",
    "**Added**": "**新增于**",
    "**Removed**": "**移除于**",
    "**Parameters**": "**参数**",
    "**Examples**": "**示例**",
    "**Deprecated**": "**已弃用**",
    "**Deprecation warning**": "**弃用警告**",
    "not found in any probed release": "在所有测量过的版本中都没有找到",
    "{added} (present in the oldest release probed, {oldest}; earlier releases were not probed)": (
        "{added}（测量过的最早版本 {oldest} 中已有；更早的版本未测量）"
    ),
    "{added} (first found in {first}; the release before it was not probed)": (
        "{added}（首次出现在 {first}；它之前的版本未测量）"
    ),
    "**{added}** (first found in torch {first})": "**{added}**（首次出现在 torch {first}）",
    "added in {release}": "{release} 新增",
    "removed in {release}": "{release} 移除",
    "default changed: {steps}": "默认值变化：{steps}",
    "required": "必填",
    "this page's examples changed since the last probe; run `versions probe --again`.": (
        "本页示例在上次测量后有改动；请运行 `versions probe --again`。"
    ),
    "all {blocks} print or assert what this page shows on torch {span}.": "在 torch {span} 上，全部 {blocks}的输出或断言都与本页一致。",
    "no probed release prints or asserts everything this page shows ({blocks}).": (
        "没有哪个测量过的版本能让全部代码块都与本页一致（{blocks}）。"
    ),
    "{n} examples": "{n} 个示例",
    " and {n} checks": "和 {n} 个检查",
    "On torch {where}, {hit} of {total} use an API that release lacks{named}.": (
        "在 torch {where} 上，{total} 个代码块中有 {hit} 个用到了该版本没有的 API{named}。"
    ),
    "On torch {where}, {hit} of {total} could not run (no torchvision for it).": (
        "在 torch {where} 上，{total} 个代码块中有 {hit} 个无法运行（没有对应的 torchvision）。"
    ),
    "The {what} fails on torch {where}": "{what}在 torch {where} 上失败",
    "check at line {line}": "第 {line} 行的检查",
    "example at line {line}": "第 {line} 行的示例",
    "**Behaviour changes** (a block's outcome changed between two releases that both have the API):": (
        "**行为变化**（在两个都有此 API 的相邻版本之间，某个代码块的结果发生了变化）："
    ),
    "- **{after}**: the {what} {now}; on {before}, it {then}.": "- **{after}**：{what}{now}；在 {before} 上，它{then}。",
    "prints or asserts what this page shows": "的输出或断言与本页一致",
    "printed other output": "输出不同",
    "failed": "失败",
    "failed: {error}": "失败：{error}",
    "Example at line {line}: output differs on torch {where}": "第 {line} 行的示例：在 torch {where} 上输出不同",
    "The example on this page": "本页上的这个示例",
    "As this page shows": "本页所示",
    "On torch {on}": "torch {on} 上",
    "on {since} until the release before {until} (not emitted from {until} on; see the behaviour changes)": (
        "从 {since} 起，到 {until} 之前的版本为止（自 {until} 起不再发出；见行为变化）"
    ),
    "since {since}": "自 {since} 起",
    "Run it yourself:": "自己运行：",
    "Page source:": "页面源文件：",
    # the banner on every page
    "{examples} examples and {checks} claim checks run on CPU": "在 CPU 上运行了 {examples} 个示例和 {checks} 个论断检查",
    ", {examples} examples and {checks} checks on CUDA": "，在 CUDA 上运行了 {examples} 个示例和 {checks} 个检查",
    "; {n} CUDA-only blocks not yet run (no GPU run is recorded)": "；{n} 个仅限 CUDA 的代码块尚未运行（尚无 GPU 运行记录）",
    "; {n} not run for other reasons, each labelled on its page": "；{n} 个因其他原因未运行，均已在所在页面标明",
    "page not verified yet": "页面尚未验证",
    # the navigation and the generated pages
    "Home": "首页",
    "Contributing": "贡献指南",
    "Guides": "指南",
    "Comparisons": "对比",
    "Coming from TensorFlow, Keras and NumPy": "从 TensorFlow、Keras 和 NumPy 迁移",
    "Tags": "标签",
    "Verification status": "验证状态",
    "Deprecations": "弃用",
    "Errors and warnings": "错误与警告",
    (
        "Every error and warning message the handbook's examples produce, as the verifier recorded them, with "
        "numbers, shapes and names written as N. Each links to the example that shows it and the page that "
        "explains it. Paste a message into the search box: its own numbers do not matter."
    ): (
        "本手册示例产生的所有错误与警告信息（取自验证器的记录），其中的数字和形状写作 N。每条都链接到展示它的示例及讲解它的页面。"
        "把报错信息粘贴到搜索框即可查找，其中的具体数字不影响结果。"
    ),
    "{n} messages from {k} examples.": "共 {n} 条信息，来自 {k} 个示例。",
    "{n} entries in {k} categories.": "共 {n} 个条目，分为 {k} 类。",
    "No {what} yet.": "暂无{what}。",
    "entries": "条目",
    "pages": "页面",
    "| page | summary |": "| 页面 | 摘要 |",
    "Every tag of the handbook with its English and Chinese label, and the pages that carry it.": (
        "本手册的所有标签，附英文和中文名称，以及带有该标签的页面。"
    ),
    "Tensor creation, shape operations, math, reductions and the other functions of the top-level package.": (
        "张量的创建、形状操作、数学运算、归约，以及顶层包中的其他函数。"
    ),
    "Methods of tensor objects.": "张量对象的方法。",
    "Linear algebra.": "线性代数。",
    "Function transforms: vmap, grad, jacobians, functional calls of modules.": (
        "函数变换：vmap、grad、雅可比矩阵，以及模块的函数式调用。"
    ),
    "Probability distributions: sampling, log-probabilities, reparameterization.": "概率分布：采样、对数概率、重参数化。",
    "Modules: layers, containers, losses.": "模块：层、容器、损失函数。",
    "The stateless functions behind the layers.": "各层背后的无状态函数。",
    "Optimizers and learning-rate schedulers.": "优化器和学习率调度器。",
    "Datasets, samplers and loaders.": "数据集、采样器和数据加载器。",
    "Gradients and custom functions.": "梯度与自定义函数。",
    "GPU devices and memory, device-neutral accelerators, mixed precision, backend switches.": (
        "GPU 设备与显存、与设备无关的加速器接口、混合精度、后端开关。"
    ),
    "Training on several processes.": "多进程训练。",
    "Images: transforms, datasets, models.": "图像：变换、数据集、模型。",
    "Other": "其他",
}


@contextmanager
def language(code: str):
    """Render in this language while the block runs."""
    _current.append(code)
    try:
        yield
    finally:
        _current.pop()


def current() -> str:
    return _current[-1]


def t(template: str, **values) -> str:
    text = ZH.get(template, template) if current() == "zh" else template
    return text.format(**values) if values else text

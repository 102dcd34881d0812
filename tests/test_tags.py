import pytest

from handbook.lint import tags


def test_vocabulary_has_the_seed_tags_with_both_labels():
    entries = {e["id"]: e for e in tags.load()}
    for tag_id, zh in [
        ("tensor-creation", "张量创建"),
        ("shape-ops", "形状操作"),
        ("math", "数学运算"),
        ("high-frequency", "高频使用"),
        ("error-prone", "易错点"),
        ("performance-critical", "性能关键"),
        ("1.0-compatible", "1.0-兼容"),
        ("2.0-new", "2.0-新特性"),
    ]:
        assert entries[tag_id]["zh"] == zh


@pytest.mark.parametrize(
    "text, message",
    [
        ("- id: a\n  en: A\n  zh: 甲\n", "exactly the fields"),
        (
            "- id: a\n  en: A\n  zh: 甲\n  description: d\n- id: a\n  en: B\n  zh: 乙\n  description: d\n",
            "listed twice",
        ),
        ("- id: a\n  en: ''\n  zh: 甲\n  description: d\n", "empty field"),
    ],
)
def test_bad_vocabulary_is_refused(tmp_path, text, message):
    path = tmp_path / "tags.yml"
    path.write_text(text)
    with pytest.raises(tags.VocabularyError, match=message):
        tags.load(path)


def test_tags_allowed_of_both_generated_configurations_comes_from_the_vocabulary(tmp_path):
    from handbook.site import site_config

    for generator in site_config.GENERATORS:
        config = site_config.generate(
            generator, tmp_path / "docs", [], {"torch": "x", "torchvision": "y"}, False, tags.ids()
        )
        (options,) = [p["tags"] for p in config["plugins"] if "tags" in p]
        assert options["tags_allowed"] == tags.ids(), generator

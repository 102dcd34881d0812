"""Post-process mkdocs-material's built search index and worker (the MkDocs adapter calls these; no MkDocs import).

- `enrich`: adds the render step's search data (search_data.py: `aliases`, `api`) to each page's top entry, which
  mkdocs.yml's search `fields` boost; tidies the Chinese segmentation the search plugin's jieba pass wrote.
- `patch_worker`: fixes the worker's Chinese query segmentation and lets it load the offline copy's prebuilt index.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from handbook.site.search_data import ZWSP, join_single_han

# mkdocs-material 9.8's search worker splits a Chinese query greedily into words of the index, but its loop stops
# one character short: the whole query, or a last word, is never tried, so 随机失活 is searched as 随机 alone.
WORKER_BUG = "for(let o=s+1;o<t.length;o++)t.slice(s,o)in e&&(n[s]=o-s)"
WORKER_FIX = "for(let o=s+1;o<=t.length;o++)t.slice(s,o)in e&&(n[s]=o-s)"


# The offline copy loads a prebuilt index (prebuilt_index.py): built once at build time by this same worker code,
# so offline search gives exactly the online results without building the index on every page load. Only from
# file:// (the worker's lunr path is then absolute, not the relative "../lunr") is the prebuilt index used: in a
# blob: worker (file-worker.js, which has loaded its core already) or in iframe-worker's.
PREBUILT_PATCHES = [
    (  # a blob: worker's relative URLs would be the blob's: its lunr folder is beside the theme's worker file
        'let e="../lunr";',
        'let e=self.__hbBase?new URL("../lunr",self.__hbBase).href:"../lunr";',
    ),
    (  # load the core of the prebuilt index (search/search_prebuilt.js) with the language scripts, offline only
        "t.lang.length>1&&r.push(`${e}/min/lunr.multi.min.js`)",
        "t.lang.length>1&&r.push(`${e}/min/lunr.multi.min.js`),"
        'e!=="../lunr"&&(self.__hbRoot=`${e}/../../../`,'
        "self.__prebuilt||r.push(`${self.__hbRoot}search/search_prebuilt.js`))",
    ),
    (  # use it when present: the same index, loaded instead of built
        "this.index=lunr(function(){",
        "this.index=self.__prebuilt?(lunr.tokenizer.separator=new RegExp(e.separator),"
        '"TinySegmenter"in lunr&&(lunr.segmenter=new lunr.TinySegmenter),'
        "e.lang.length>1&&lunr.multiLanguage(...e.lang),"
        "self.__hbPipeline=lunr.Pipeline.load(self.__prebuilt.pipeline),"
        "this.refs=self.__prebuilt.refs,this.docs=self.__hbDocs(self.__prebuilt),"
        "self.__hbIndex(self.__prebuilt)):lunr(function(){",
    ),
    (  # keep the pipeline the index was built with: search_worker.js runs a section's tokens through it again
        'this.ref("location");',
        'self.__hbPipeline=this.pipeline;this.ref("location");',
    ),
    (  # its documents come as stubs (location and title), each loaded whole when a result shows it: the page's own
        # search_index.js then carries only the configuration
        "this.map=ie(r),",
        "this.map=ie(self.__prebuilt?self.__hbStubs(self.__prebuilt):r),",
    ),
    (  # answer only the newest of the queries waiting (search_worker.js, __hbLatest)
        'addEventListener("message",t=>W(null,null,function*(){postMessage(yield Fe(t.data))}));',
        'addEventListener("message",t=>W(null,null,function*(){let r=yield self.__hbLatest(t.data,Fe);r&&postMessage(r)}));',
    ),
    # the last two patch the same code: keep them last, in this order (tests/test_search_index.py)
    (  # expose the built index, so the build can serialize it
        "case 0:return yield Ie(t.data.config),de=new U(t.data),{type:1};",
        "case 0:return yield Ie(t.data.config),de=new U(t.data),self.__search=de,{type:1};",
    ),
    (  # in iframe-worker's worker (the page's thread): wait for the page to be idle; the shards load in its idle time
        "case 0:return yield Ie(t.data.config),",
        "case 0:return yield self.__hbIdle(),yield Ie(t.data.config),yield self.__hbLoadAhead(),",
    ),
]


# The theme's search method is kept as themeSearch; search() calls the handbook's (search_worker.js), handing it
# the theme's own helpers (the names are this release's minified ones; patch_worker checks each is there).
SEARCH_START = 'search(e){if(e=e.replace(new RegExp("\\\\p{sc=Han}+","gu")'
SEARCH_END = 'typeof i!="undefined"&&{suggest:i})}'
SEARCH_HELPERS = {  # role -> the theme's function, and a piece of the theme's code that shows it has that role
    "segment": ("fe", "[...fe(s,this.index.invertedIndex)]"),
    "transform": ("ce", "e=ce(e),"),
    "parse": ("le", "r=le(e).filter("),
    "terms": ("he", "let f=he(r,Object.keys(u.metadata))"),
    "highlight": ("oe", "v=Array.isArray(c[l])?q:oe;"),
    "highlightAll": ("q", "v=Array.isArray(c[l])?q:oe;"),
    "tokenize": ("ae", "this.tokenizer=ae,"),
}
SEARCH_METHOD = Path(__file__).with_name("search_worker.js")


class WorkerPatchError(RuntimeError):
    pass


def _replace_search(text: str) -> str:
    start = text.find(SEARCH_START)
    end = text.find(SEARCH_END, start) + len(SEARCH_END)
    if text.count(SEARCH_START) != 1 or end < len(SEARCH_END) or text.count(SEARCH_END) != 1:
        raise WorkerPatchError("mkdocs-material's search worker changed: its search method was not found once")
    for role, (name, evidence) in SEARCH_HELPERS.items():
        if evidence not in text:
            raise WorkerPatchError(
                f"mkdocs-material's search worker changed: {role} is no longer {name}() ({evidence!r})"
            )
    helpers = ",".join(f"{role}:{name}" for role, (name, _) in SEARCH_HELPERS.items())
    theme = text[start:end]
    ours = f"search(e){{return self.__hbSearch.call(this,e,{{{helpers}}})}}theme{theme[0].upper()}{theme[1:]}"
    return _upstream() + SEARCH_METHOD.read_text(encoding="utf-8") + text[:start] + ours + text[end:]


def _upstream() -> str:
    """The official reference's address for any torch and torchvision name, pinned to the installed releases
    (official.upstream): the search offers it for a name the handbook has no page for (search_worker.js)."""
    from handbook.site.official import upstream

    pinned = {lib: upstream(f"{lib}.HBNAME").replace(f"{lib}.HBNAME", "HBNAME") for lib in ("torch", "torchvision")}
    for lib in ("torch", "torchvision"):
        pinned[f"{lib}_release"] = re.search(r"/(\d+\.\d+)/", pinned[lib]).group(1)
    return f"self.__hbUpstream={json.dumps(pinned)};\n"


def patch_worker(site_dir: Path) -> Path:
    """Fix the query segmentation loop in the built search worker and let it load a prebuilt index; fail loudly
    if the theme's code changed."""
    workers = sorted((site_dir / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    if len(workers) != 1:
        raise WorkerPatchError(f"expected one search worker in {site_dir}, found {len(workers)}")
    text = workers[0].read_text(encoding="utf-8")
    for old, new in [(WORKER_BUG, WORKER_FIX), *PREBUILT_PATCHES]:
        if text.count(old) != 1:
            raise WorkerPatchError(
                f"mkdocs-material's search worker changed: review the patches in handbook/site/search_index.py ({old!r})"
            )
        text = text.replace(old, new)
    workers[0].write_text(_replace_search(text), encoding="utf-8")
    return workers[0]


# From file://, mkdocs-material sets up its search worker only when the reader opens search, so the first query
# waits for the whole index to load. The offline copy's prebuilt index loads in a quarter of a second: the page
# starts it at once, and the worker (search_worker.js, __hbIdle) waits for an idle moment of the page to load it.
BUNDLE_PATCHES = [('L($(location.protocol!=="file:"),Je("search"))', 'L($(!0),Je("search"))')]


def patch_bundle(site_dir: Path) -> Path:
    """Let the offline copy set up its search at page load; fail loudly if the theme's code changed."""
    bundles = sorted((site_dir / "assets" / "javascripts").glob("bundle.*.min.js"))
    if len(bundles) != 1:
        raise WorkerPatchError(f"expected one theme bundle in {site_dir}, found {len(bundles)}")
    text = bundles[0].read_text(encoding="utf-8")
    for old, new in BUNDLE_PATCHES:
        if text.count(old) != 1:
            raise WorkerPatchError(f"mkdocs-material's bundle changed: review BUNDLE_PATCHES ({old!r})")
        text = text.replace(old, new)
    bundles[0].write_text(text, encoding="utf-8")
    return bundles[0]


_PRE = re.compile(r"<pre>.*?</pre>", re.S)


def migration_names() -> dict[str, list[str]]:
    """torch API -> the other frameworks' names the migration maps give it (tf.concat, np.concatenate for
    torch.cat): searched, they find the torch page first, not the map that lists every name."""
    from handbook.lint import maps

    names: dict[str, list[str]] = {}
    for m in maps.load_all().values():
        for row in m.rows:
            others = [o.strip() for o in str(row.get("other", "")).split(" / ") if o.strip()]
            for api in row.get("torch") or []:
                names.setdefault(str(api), []).extend(o for o in others if o not in names.get(str(api), []))
    return names


def enrich(index: dict, data: dict, migration: dict[str, list[str]] | None = None) -> None:
    """Add the `aliases` and `api` fields of the search data to each page's top entry (and to an api page's aliases
    the migration maps' names for its API); tidy Chinese segmentation everywhere; leave code and output blocks out
    of the text (a quarter of the index: tensor values and variable names that no reader searches for, and whose
    weight slows every page's index load)."""
    migration = migration_names() if migration is None else migration
    for entry in index["docs"]:
        entry["text"] = _PRE.sub(" ", entry["text"])
        for field in ("title", "text"):
            entry[field] = join_single_han(entry[field])
        for field in ("aliases", "api"):
            if entry["location"] in data[field]:
                entry[field] = data[field][entry["location"]]
        api = data["api"].get(entry["location"], "").split(ZWSP)[0]
        if migration.get(api):
            entry["aliases"] = ZWSP.join(filter(None, [entry.get("aliases", ""), *migration[api]]))

// The handbook's search method for mkdocs-material's search worker, installed by search_index.patch_worker in
// place of the theme's (which stays beside it as themeSearch, for the equivalence test).
//
// The theme highlights every matching section and posts them all, full text included, to the page: a broad query
// ("torch.cat" matches 480 pages) costs 100-400 ms in the worker and a message of several MB, though the page
// shows ten results at first. This method scores, sorts and groups exactly as the theme does, so the list of
// results and its order are the theme's; it highlights the first HIGHLIGHTED_GROUPS groups as the theme does, and
// the groups after them carry their titles only. An index stored without token positions (the offline copy's
// prebuilt index, a third of the size) finds them by tokenizing those sections again through the index's own
// pipeline, which gives the positions the index would have stored (tests/browser/search_equivalence.js).
self.__hbSearch = function (query, fn) {
  const HIGHLIGHTED_GROUPS = 30;
  query = query.replace(/\p{sc=Han}+/gu, (value) => [...fn.segment(value, this.index.invertedIndex)].join("* "));
  query = fn.transform(query);
  if (!query) return { items: [] };
  const clauses = fn.parse(query).filter((clause) => clause.presence !== lunr.Query.presence.PROHIBITED);

  const scored = [];
  for (const { ref, score, matchData } of this.index.search(query)) {
    const doc = this.map.get(this.refs ? this.refs[ref] : ref);
    if (doc === undefined) continue;
    const terms = fn.terms(clauses, Object.keys(matchData.metadata));
    const boost = +!doc.parent + Object.values(terms).filter((t) => t).length / Object.keys(terms).length;
    scored.push({ doc, matchData, score: score * (1 + boost ** 2), terms });
  }
  scored.sort((a, b) => b.score - a.score);

  const groups = new Map();
  for (const item of scored) {
    const article = item.doc.parent ? item.doc.parent.location : item.doc.location;
    if (!groups.has(article)) groups.set(article, []);
    groups.get(article).push(item);
  }

  const highlighted = (item) => {
    const { parent, ...doc } = item.doc; // the page never reads parent: not sent (the article's whole text each time)
    if (doc.tags) doc.tags = [...doc.tags];
    const metadata = item.matchData.metadata;
    for (const field of this.index.fields) {
      if (doc[field] === undefined) continue;
      const matched = new Set(Object.keys(metadata).filter((term) => metadata[term][field] !== undefined));
      if (!matched.size) continue;
      let positions = [...matched].flatMap((term) => metadata[term][field].position || []);
      let table = this.table.get([doc.location, field].join(":"));
      if (!positions.length) {  // an index stored without positions: tokenize the section as the index did
        lunr.tokenizer.table = [];
        positions = self.__hbPipeline
          .run(fn.tokenize(item.doc[field]))
          .filter((token) => matched.has(token.toString()))
          .map((token) => token.metadata.position);
        table = lunr.tokenizer.table;
      }
      if (!positions.length) continue;
      const highlight = Array.isArray(doc[field]) ? fn.highlightAll : fn.highlight;
      doc[field] = highlight(doc[field], table, positions, field !== "text");
    }
    return { ...doc, score: item.score, terms: item.terms };
  };
  const brief = (doc, score, terms) => ({ location: doc.location, title: doc.title, text: "", score, terms });

  const items = [];
  for (const [article, list] of groups) {
    const full = items.length < HIGHLIGHTED_GROUPS;
    const out = list.map((item) => (full ? highlighted(item) : brief(item.doc, item.score, item.terms)));
    if (!list.find((item) => item.doc.location === article)) {
      const doc = this.map.get(article);
      out.push(full ? { ...doc, score: 0, terms: {} } : brief(doc, 0, {}));
    }
    items.push(out);
  }

  let suggest;
  if (this.options.suggest) {
    const titles = this.index.query((builder) => {
      for (const clause of clauses)
        builder.term(clause.term, {
          fields: ["title"],
          presence: lunr.Query.presence.REQUIRED,
          wildcard: lunr.Query.wildcard.TRAILING,
        });
    });
    suggest = titles.length ? Object.keys(titles[0].matchData.metadata) : [];
  }
  return suggest === undefined ? { items } : { items, suggest };
};

// The offline copy's prebuilt index (prebuild_search.js) as a lunr.Index: the tokens' set is built at once, each
// term's postings and each section's vector are decoded the first time a query reaches them.
self.__hbIndex = function (pre) {
  const lazy = (target, key, decode) => {
    let value;
    Object.defineProperty(target, key, {
      enumerable: true,
      get: () => (value === undefined ? (value = decode()) : value),
    });
  };
  const invertedIndex = Object.create(null);
  const tokens = new lunr.TokenSet.Builder();
  for (const [term, index, postings] of pre.terms) {
    tokens.insert(term);
    lazy(invertedIndex, term, () => {
      const posting = { _index: index };
      pre.fields.forEach((field, i) => {
        posting[field] = Object.create(null);
        if (postings[i]) for (const ref of postings[i].split(",")) posting[field][ref] = {};
      });
      return posting;
    });
  }
  tokens.finish();
  const fieldVectors = Object.create(null);
  for (const [fieldRef, elements] of Object.entries(pre.vectors))
    lazy(fieldVectors, fieldRef, () => new lunr.Vector(elements.split(",").map(Number)));
  return new lunr.Index({
    invertedIndex,
    fieldVectors,
    tokenSet: tokens.root,
    fields: pre.fields,
    pipeline: lunr.Pipeline.load(pre.searchPipeline),
  });
};

// In the offline copy the worker is an iframe on the page's own thread (iframe-worker): loading the index waits
// for the page to be idle (at most a second), so it never competes with the page's first paint and scroll. A real
// worker (online) has no requestIdleCallback and loads at once.
self.__hbIdle = () =>
  new Promise((resolve) =>
    typeof requestIdleCallback === "function" ? requestIdleCallback(resolve, { timeout: 1000 }) : resolve(),
  );

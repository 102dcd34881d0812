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
  // A query of one Latin letter (a reader's first keystroke) is searched as that word, not as the prefix of every
  // word it starts: "c*" expands to a tenth of the vocabulary and matches every page, which tells the reader
  // nothing and costs 300-800 ms (a whole second on the offline copy's single thread) while the next keys wait.
  if (/^[a-z]\*$/i.test(query)) query = query.slice(0, -1);
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
        const section = self.__hbTokens(doc.location, field, item.doc[field], fn.tokenize);
        positions = section.terms.flatMap(([term, position]) => (matched.has(term) ? [position] : []));
        table = section.table;
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

// What the index's pipeline makes of one word (its terms: none for a stop word), remembered: highlighting a broad
// query's sections runs the stemmer over the same words again and again (most of the time of a query offline).
// The pipeline's steps (trimmer, stop words, stemmer) each look at one token alone, so a word's terms are the same
// whether it runs alone or within its section.
const hbTerms = new Map();
self.__hbTerms = (word) => {
  let terms = hbTerms.get(word);
  if (terms === undefined) {
    terms = self.__hbPipeline.run([new lunr.Token(word, {})]).map(String);
    hbTerms.set(word, terms);
  }
  return terms;
};

// A section's terms with their positions, and its table of token offsets, remembered: as a reader types, query
// after query highlights the same top sections (c, co, con ...).
const hbTokens = new Map();
self.__hbTokens = (location, field, value, tokenize) => {
  const key = `${location}:${field}`;
  let section = hbTokens.get(key);
  if (section === undefined) {
    lunr.tokenizer.table = [];
    const terms = [];
    for (const token of tokenize(value))
      for (const term of self.__hbTerms(token.toString())) terms.push([term, token.metadata.position]);
    section = { terms, table: lunr.tokenizer.table };
    hbTokens.set(key, section);
  }
  return section;
};

// The offline copy's prebuilt index (prebuild_search.js) as a lunr.Index: the token set is rebuilt from its
// serialized nodes, and each term's postings and each section's vector are decoded the first time a query reaches
// them (the index reads them by key, and looks terms up with `in`: a proxy answers both).
self.__hbIndex = function (pre) {
  const lazy = (raw, decode) => {
    const decoded = new Map();
    const get = (key) => {
      if (typeof key !== "string" || !Object.hasOwn(raw, key)) return undefined;
      if (!decoded.has(key)) decoded.set(key, decode(raw[key]));
      return decoded.get(key);
    };
    return new Proxy(Object.create(null), {
      get: (_, key) => get(key),
      has: (_, key) => typeof key === "string" && Object.hasOwn(raw, key),
      ownKeys: () => Object.keys(raw),
      getOwnPropertyDescriptor: (_, key) =>
        Object.hasOwn(raw, key) ? { value: get(key), enumerable: true, configurable: true, writable: false } : undefined,
    });
  };
  const postings = Object.create(null);
  for (const [term, index, lists] of pre.terms) postings[term] = [index, lists];
  const invertedIndex = lazy(postings, ([index, lists]) => {
    const posting = { _index: index };
    pre.fields.forEach((field, i) => {
      posting[field] = Object.create(null);
      if (lists[i]) for (const ref of lists[i].split(",")) posting[field][ref] = {};
    });
    return posting;
  });
  const fieldVectors = lazy(pre.vectors, (elements) => new lunr.Vector(elements.split(",").map(Number)));
  // Decoded lazily, the first broad query pays for most of the index (twice the time of the same query warm), so
  // the page's idle moments decode it all ahead of the reader, a slice at a time (in the offline copy, where the
  // worker shares the page's thread; a real worker has no requestIdleCallback and builds its index whole).
  if (typeof requestIdleCallback === "function") {
    const ahead = [
      ...Object.keys(postings).map((term) => [invertedIndex, term]),
      ...Object.keys(pre.vectors).map((fieldRef) => [fieldVectors, fieldRef]),
    ];
    let next = 0;
    const slice = (deadline) => {
      while (next < ahead.length && deadline.timeRemaining() > 1) {
        const [target, key] = ahead[next++];
        void target[key]; // the proxy decodes it
      }
      if (next < ahead.length) requestIdleCallback(slice);
    };
    requestIdleCallback(slice);
  }
  // The token set's nodes, each [final, its edges' characters, the nodes they lead to]; node 0 is the root.
  const nodes = pre.tokenSet.map(() => new lunr.TokenSet());
  pre.tokenSet.forEach(([final, chars, children], i) => {
    nodes[i].final = final === 1;
    for (let k = 0; k < chars.length; k++) nodes[i].edges[chars[k]] = nodes[children[k]]; // UTF-16 units, as lunr's
  });
  return new lunr.Index({
    invertedIndex,
    fieldVectors,
    tokenSet: nodes[0],
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

// Only the newest query is answered: a reader types faster than a broad query is searched, and each keystroke
// sends one (the theme does not wait for a pause in typing). Queries that arrive while one is being searched wait
// their turn; of those, all but the last are stale by then, and their answers would only delay the last one's.
let hbLatest = null;
self.__hbLatest = async (message, handle) => {
  if (message.type !== 2) return handle(message);
  hbLatest = message;
  await new Promise((resolve) => setTimeout(resolve, 0));
  return hbLatest === message ? handle(message) : null;
};

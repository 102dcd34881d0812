// The handbook's search method for mkdocs-material's search worker, installed by search_index.patch_worker in
// place of the theme's (which stays beside it as themeSearch, for the equivalence test).
//
// The theme highlights every matching section and posts them all, full text included, to the page: a broad query
// ("torch.cat" matches 480 pages) costs 100-400 ms in the worker and a message of several MB, though the page
// shows ten results at first. This method scores, sorts and groups exactly as the theme does, so the list of
// results and its order are the theme's; it highlights the first groups as the theme does (30, or the ten the page
// shows first: __hbLatest), and the groups after them carry their titles only. An index stored without token
// positions (the offline copy's prebuilt index, a third of the size) finds them by tokenizing those sections again
// through the index's own pipeline, which gives the positions the index would have stored
// (tests/browser/search_equivalence.js).
self.__hbSearch = function (query, fn) {
  try {
    return hbSearch.call(this, query, fn);
  } catch (error) {
    if (!(error instanceof HbMissing)) throw error;
    return { items: [], missing: error.shards }; // __hbLatest loads them and searches again
  }
};
const hbSearch = function (query, fn) {
  const HIGHLIGHTED_GROUPS = hbGroups;
  const reference = hbReference.call(this, query);
  query = self.__hbPrepare(query);
  query = query.replace(/\p{sc=Han}+/gu, (value) => hbSegment(value, fn.segment, this.index.invertedIndex).join("* "));
  query = fn.transform(query);
  if (!query) return { items: reference ? [reference] : [] };
  // A query of one Latin letter (a reader's first keystroke) is searched as that word, not as the prefix of every
  // word it starts: "c*" expands to a tenth of the vocabulary and matches every page, which tells the reader
  // nothing and costs 300-800 ms (a whole second on the offline copy's single thread) while the next keys wait.
  if (/^[a-z]\*$/i.test(query)) query = query.slice(0, -1);
  // A clause whose term is empty is dropped: the theme makes one of a word typed up to a separator ("shape-"
  // becomes "shape-*", whose "-*" is the wildcard alone), and it matches every term of the index, so every page,
  // at the cost of scoring the whole index (800 ms in a worker; 1.7 s on the offline copy's first such query) while
  // the reader's next keys wait. Without it "shape-" is searched as the words before the separator.
  const empty = (clause) => clause.term.replace(/\*/g, "") === ""; // lunr writes the wildcard into the term
  const clauses = fn
    .parse(query)
    .filter((clause) => clause.presence !== lunr.Query.presence.PROHIBITED && !empty(clause));
  if (self.__prebuilt && hbInPage()) {  // the terms shards of every clause at once, not one per search again
    const keys = new Set(self.__prebuilt.shards.terms);
    const missing = [...new Set(clauses.map((clause) => self.__hbShardKey(clause.term.replace(/\*/g, ""))))]
      .filter((key) => keys.has(key) && !hbShards.terms.has(key));
    if (missing.length) throw new HbMissing(missing.map((key) => ["terms", key]));
  }
  const found = this.index.query((builder) => {
    new lunr.QueryParser(query, builder).parse();
    builder.clauses = builder.clauses.filter((clause) => !empty(clause));
  });

  const scored = [];
  for (const { ref, score, matchData } of found) {
    const doc = this.map.get(this.refs ? this.refs[ref] : ref);
    if (doc === undefined) continue;
    const terms = fn.terms(clauses, Object.keys(matchData.metadata));
    const boost = +!doc.parent + Object.values(terms).filter((t) => t).length / Object.keys(terms).length;
    const rank = hbRank.call(this, doc, clauses, matchData.metadata);
    scored.push({ doc, matchData, score: score * (1 + boost ** 2) * rank, terms });
  }
  scored.sort((a, b) => b.score - a.score);

  const groups = new Map();
  for (const item of scored) {
    const article = item.doc.parent ? item.doc.parent.location : item.doc.location;
    if (!groups.has(article)) groups.set(article, []);
    groups.get(article).push(item);
  }

  // The offline copy's documents are stubs until a result shows them (__hbDocs); online they are whole.
  const full = this.docs ? this.docs.full : (doc) => doc;
  // On the page's thread, where the shards of the sections to highlight are not loaded yet, the groups are
  // answered with their titles only and those shards named (__hbLatest shows the titles while they load).
  let missing = [];
  if (this.docs) {
    const shown = [...groups].slice(0, HIGHLIGHTED_GROUPS);
    missing = this.docs.prefetch(shown.flatMap(([article, list]) => [...list.map((item) => item.doc), this.map.get(article)].filter(Boolean)));
  }
  const highlighted = (item) => {
    const source = full(item.doc);
    const { parent, ...doc } = source; // the page never reads parent: not sent (the article's whole text each time)
    if (doc.tags) doc.tags = [...doc.tags];
    const metadata = item.matchData.metadata;
    for (const field of this.index.fields) {
      if (doc[field] === undefined) continue;
      const matched = new Set(Object.keys(metadata).filter((term) => metadata[term][field] !== undefined));
      if (!matched.size) continue;
      let positions = [...matched].flatMap((term) => metadata[term][field].position || []);
      let table = this.table.get([doc.location, field].join(":"));
      if (!positions.length) {  // an index stored without positions: tokenize the section as the index did
        const section = self.__hbTokens(doc.location, field, source[field], fn.tokenize);
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
    const whole = !missing.length && items.length < HIGHLIGHTED_GROUPS;
    const out = list.map((item) => (whole ? highlighted(item) : brief(item.doc, item.score, item.terms)));
    if (!list.find((item) => item.doc.location === article)) {
      const doc = this.map.get(article);
      out.push(whole ? { ...full(doc), score: 0, terms: {} } : brief(doc, 0, {}));
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
  if (reference) items.unshift(reference);
  const answer = suggest === undefined ? { items } : { items, suggest };
  return missing.length ? { ...answer, missing } : answer;
};

// Questions and sentences as readers type them ("how do I concatenate tensors", "如何保存模型"), and pasted error
// messages with their own numbers and shapes: the words that say nothing about the page are left out of the query
// before it is searched. English: lunr's own stop words (the index never holds them: a query's "how" only matched
// as the prefix of "however", "howto" ...) and a few question words; a word that is a number or a shape ("64x100",
// "(3)", "[2, 3]"), as errors.py writes them N in the pages' search words. Chinese: the question words, and a
// sentence's particles at either end. A query that is nothing but such words is searched as typed.
const HB_STOP = new Set(
  ("a able about across after all almost also am among an and any are as at be because been but by can cannot " +
    "could dear did do does either else ever every for from get got had has have he her hers him his how however " +
    "i if in into is it its just least let like likely may me might most must my neither no nor not of off often " +
    "on only or other our own rather said say says she should since so some than that the their them then there " +
    "these they this tis to too twas us wants was we were what when where which while who whom why will with " +
    "would yet you your i'm i've can't don't doesn't didn't isn't won't what's how's " +
    // every page of the handbook is about tensors and PyTorch: in a sentence these words tell no page from another
    "tensor tensors pytorch").split(" "),
);
const HB_NUMBER = /^[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?:x[-+]?\d+(?:\.\d+)?)*$/i;
const HB_HAN_QUESTION = /如何|怎么样|怎么办|怎么|怎样|为什么|为何|是什么|什么|哪些|哪个|是否|能否|可以|应该|请问|一个|两个|多个|张量/g;
const HB_HAN_EDGES = /^(?:我们|我|请|在)|(?:吗|呢|啊|吧|了)$/g;
self.__hbPrepare = (query) => {
  const han = query.replace(/\p{sc=Han}+/gu, (run) => {
    const kept = run.replace(HB_HAN_QUESTION, " ").split(" ").map((part) => part.replace(HB_HAN_EDGES, ""));
    return kept.join(" ").trim() ? kept.join(" ") : run;
  });
  const words = han.replace(/[?？!！。，、；;]+/g, " ").split(/\s+/).filter(Boolean);
  const core = (word) => word.replace(/^[^\p{L}\p{N}_]+|[^\p{L}\p{N}_]+$/gu, "").toLowerCase();
  const kept = words.filter((word) => {
    const c = core(word);
    return c && !HB_STOP.has(c) && !HB_NUMBER.test(c);
  });
  return kept.length ? kept.join(" ") : query.trim();
};

// A Chinese sentence is cut into the index's words by the theme's segmentation; where that leaves a piece that is
// no word of the index (it does for a sentence with words the index lacks: 每次训练结果不一样 came back whole, and
// found nothing), the piece is cut again, longest index word first from the left, and what no word covers is left
// out.
const hbSegment = (run, segment, index) => {
  const pieces = [...segment(run, index)];
  if (pieces.every((piece) => piece in index)) return pieces;
  return pieces.flatMap((piece) => {
    if (piece in index) return [piece];
    const words = [];
    for (let i = 0; i < piece.length; ) {
      let j = Math.min(piece.length, i + 8);
      while (j > i + 1 && !(piece.slice(i, j) in index)) j--;
      if (j > i + 1) words.push(piece.slice(i, j));
      i = j > i + 1 ? j : i + 1;
    }
    return words.length ? words : [piece];
  });
};

// Pages that list other pages (the Tags page, the module indexes, the home page, the migration maps, the
// generated listings) hold every page's names and aliases, and so match nearly any query: they rank far below the
// pages themselves unless every word of the query names them (their title; the Tags page's tag names). And where
// the query's words are a page's names (its API name, aliases, title) rather than words of its text, it ranks
// first: "tf.concat" is torch.cat's alias `concat`, and only a prefix of ConcatDataset.
const HB_LISTINGS = /^(?:|tags|errors|verification|coverage|changes(?:\/.*)?|migration\/(?:numpy|keras|tensorflow))$/;
const HB_NAMES = ["api", "aliases", "title"];
const hbKey = (location) => location.replace(/(?:^|\/)index\.html$/, "").replace(/\.html$/, "").replace(/\/$/, "");
const hbListing = function (article) {
  if (this.hbListings === undefined) {
    const keys = [...this.map.values()].filter((doc) => !doc.parent).map((doc) => hbKey(doc.location));
    const parents = new Set();
    for (const key of keys) for (let cut = key.lastIndexOf("/"); cut > 0; cut = key.lastIndexOf("/", cut - 1)) parents.add(key.slice(0, cut));
    this.hbListings = new Set(keys.filter((key) => HB_LISTINGS.test(key) || parents.has(key)));
  }
  return this.hbListings.has(hbKey(article));
};
const hbRank = function (doc, clauses, metadata) {
  const terms = Object.keys(metadata);
  const within = (clause, fields, exact) => {
    const word = clause.term.replace(/\*/g, "");
    const stems = self.__hbTerms(word);
    const forms = exact ? stems : [word, ...stems];
    return terms.some(
      (term) =>
        forms.some((form) => (exact ? term === form : term.startsWith(form))) &&
        fields.some((field) => metadata[term][field] !== undefined),
    );
  };
  const article = doc.parent ? doc.parent.location : doc.location;
  if (hbListing.call(this, article)) {
    const own = hbKey(article) === "tags" ? ["title", "tags", "aliases"] : ["title", "tags"];
    return clauses.length && clauses.every((clause) => within(clause, own, true)) ? 5 : 1e-6;
  }
  const words = clauses.filter((clause) => clause.term.replace(/\*/g, "").length > 1); // "F" of F.conv2d names little
  const named = words.filter((clause) => within(clause, HB_NAMES, true)).length;
  // Every word of a query of several is one of the page's names ("add dimension", "nan loss"): it outranks pages
  // that only one of the words names (torch.add, addcmul_ for "add"), however often their text repeats the other.
  if (words.length > 1 && named === words.length) return 15;
  return 1 + (words.length ? (4 * named) / words.length : 0);
};

// A torch name the handbook has no page for (torch.linalg.lstsq, F.gumbel_softmax, torchvision.ops.nms) is answered
// first with the official reference for exactly that name, pinned to the release the handbook verifies
// (search_index.patch_worker writes the addresses: official.upstream()). The names that have pages are the
// articles' titles (an api page's title is its API).
const HB_API_NAME = /^(torch|torchvision|F|nn|Tensor)(\.[A-Za-z_]\w*)+(?:\(\))?$/;
const HB_SHORT = { F: "torch.nn.functional", nn: "torch.nn", Tensor: "torch.Tensor" };
const hbReference = function (query) {
  const typed = query.trim();
  if (!self.__hbUpstream || !HB_API_NAME.test(typed)) return null;
  const first = typed.split(".")[0];
  const name = (HB_SHORT[first] ? HB_SHORT[first] + typed.slice(first.length) : typed).replace(/\(\)$/, "");
  if (this.hbTitles === undefined)
    this.hbTitles = new Set([...this.map.values()].filter((doc) => !doc.parent).map((doc) => doc.title.toLowerCase()));
  if (this.hbTitles.has(name.toLowerCase())) return null;
  const vision = name.startsWith("torchvision.");
  const address = self.__hbUpstream[vision ? "torchvision" : "torch"].replace("HBNAME", name);
  const release = self.__hbUpstream[vision ? "torchvision_release" : "torch_release"];
  const text =
    `<p>The handbook has no page for <code>${name}</code>: its official reference, ` +
    `${vision ? "torchvision" : "torch"} ${release}.</p>`;
  return [{ location: address, title: `${name} — official reference`, text, score: 1e12, terms: {} }];
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

// The offline copy's prebuilt index (prebuild_search.js): a small core, search/search_prebuilt.js (the token set,
// each section's location, title and shard), and shards that register themselves with __hbShard:
// search/prebuilt/terms/<key>.js (the postings of the terms that start alike, each with its weight in the section's
// field vector) and search/prebuilt/docs/<number>.js (the sections, text included, many articles to a shard). In a
// real worker (file-worker.js) importScripts is synchronous, and a shard loads the first time a query reaches it;
// iframe-worker's is not, so there a query that reaches a shard not loaded yet loads it and searches again
// (HbMissing, below), and the rest load in the page's idle time (__hbLoadAhead).
const hbShards = { terms: new Map(), docs: new Map() };
self.__hbShard = (kind, key, data) => void hbShards[kind].set(String(key), data);
// Which terms shard a term is in (prebuild_search.js writes them by this same function).
self.__hbShardKey = (term) => (/^[0-9a-z]/.test(term) ? term[0] : `u${term.charCodeAt(0) % 16}`);
const hbShardUrl = (kind, key) => `${self.__hbRoot}search/prebuilt/${kind}/${key}.js`;
// On the page's thread (iframe-worker's worker) a script cannot be loaded synchronously: a query that reaches a
// shard not loaded yet stops with HbMissing, and __hbLatest loads the shards it names (script elements, in
// parallel) and searches again. So a page's first query loads only the shards it reaches, not the whole index
// (7 MB of scripts, 400-600 ms on the page's thread of a 2-core machine before any query could be answered).
const hbInPage = () => typeof document !== "undefined";
class HbMissing extends Error {
  constructor(shards) {
    super(`search index shards not loaded yet: ${shards.map((shard) => shard.join("/")).join(", ")}`);
    this.shards = shards;
  }
}
const hbShard = (kind, key) => {
  key = String(key);
  if (!hbShards[kind].has(key)) {
    if (hbInPage()) throw new HbMissing([[kind, key]]);
    importScripts(hbShardUrl(kind, key));
  }
  return hbShards[kind].get(key);
};
const hbScripts = new Map(); // url -> the promise of its script element's load
const hbLoad = (shards) =>
  Promise.all(
    shards.map(([kind, key]) => {
      const src = hbShardUrl(kind, key);
      if (!hbScripts.has(src))
        hbScripts.set(
          src,
          new Promise((resolve, reject) => {
            const script = document.createElement("script");
            script.src = src;
            // a shard that loads but does not register would be named missing again and again: an error instead
            const unregistered = () => new Error(`${src} registered no ${kind} shard ${key}`);
            script.onload = () => (hbShards[kind].has(String(key)) ? resolve() : reject(unregistered()));
            script.onerror = () => reject(new Error(`${src} did not load`));
            document.body.appendChild(script);
          }),
        );
      return hbScripts.get(src);
    }),
  );

// On the page's thread, the shards no query has loaded yet load one at a time in the page's idle moments once the
// index is set up, the terms first (small) and then the documents; a real worker loads lazily (__hbDocs).
let hbTermsLoaded = null;
self.__hbLoadAhead = () => {
  if (!self.__prebuilt || !hbInPage()) return Promise.resolve();
  const { terms, docs } = self.__prebuilt.shards;
  const ahead = [...terms.map((key) => ["terms", key]), ...docs.map((key) => ["docs", key])];
  let termsDone;
  hbTermsLoaded = new Promise((resolve) => (termsDone = resolve));
  const next = () => {
    while (ahead.length && hbShards[ahead[0][0]].has(String(ahead[0][1]))) ahead.shift();
    if (!ahead.length || ahead[0][0] !== "terms") termsDone();
    if (!ahead.length) return;
    hbLoad([ahead.shift()]).then(() => requestIdleCallback(next, { timeout: 1000 }));
  };
  requestIdleCallback(next, { timeout: 1000 });
  return Promise.resolve();
};

// The sections as the theme's search needs them to score and group (location and title; ie() links each to its
// article), and each one whole, from its shard, when a result shows it. A real worker loads the few document
// shards one at a time once it is set up, between queries (each takes 10-30 ms), so that the reader's first query
// seldom waits for them; a query that needs one not loaded yet loads it then.
self.__hbStubs = (pre) => pre.refs.map((location, i) => ({ location, title: pre.titles[i] }));
self.__hbDocs = (pre) => {
  const number = new Map(pre.refs.map((location, i) => [location, i]));
  const shard = (doc) => pre.docShards[number.get(doc.location)];
  if (typeof document === "undefined" && self.__hbRoot) {
    const ahead = [...pre.shards.docs];
    const next = () => {
      const key = ahead.shift();
      if (key === undefined) return;
      hbShard("docs", key);
      setTimeout(next, 0);
    };
    setTimeout(next, 0);
  }
  return {
    full: (doc) => hbShard("docs", shard(doc))[number.get(doc.location)],
    prefetch: (docs) => {  // one importScripts for the shards of the results a query highlights
      const missing = [...new Set(docs.map(shard))].filter((key) => !hbShards.docs.has(String(key)));
      if (!missing.length) return [];
      if (hbInPage()) return missing.map((key) => ["docs", String(key)]); // loaded by __hbLatest
      importScripts(...missing.map((key) => hbShardUrl("docs", key)));
      return [];
    },
  };
};

// The prebuilt index as a lunr.Index. A term's postings are decoded the first time a query reaches it, and with them
// the term's weight in each section's field vector; a field vector holds the weights of the terms decoded so far,
// which include every term of the query being scored (lunr looks up all of a query's terms before it scores), so
// its dot product with the query's vector is the one the whole vector gives. The index reads postings and vectors
// by key and looks terms up with `in`: a proxy answers both.
self.__hbIndex = function (pre) {
  const terms = new Set(pre.shards.terms);
  const postings = new Map();
  const weights = new Map(); // fieldRef -> { pairs: [[term index, weight] ...], vector }
  const raw = (term) => {
    if (typeof term !== "string" || !term) return undefined;
    const key = self.__hbShardKey(term);
    const shard = terms.has(key) ? hbShard("terms", key) : undefined;
    return shard && Object.hasOwn(shard, term) ? shard[term] : undefined;
  };
  const posting = (term) => {
    if (postings.has(term)) return postings.get(term);
    const entry = raw(term);
    if (entry === undefined) return undefined;
    const [index, lists] = entry;
    const decoded = { _index: index };
    pre.fields.forEach((field, i) => {
      decoded[field] = Object.create(null);
      if (!lists[i]) return;
      const values = lists[i].split(",");
      for (let k = 0; k < values.length; k += 2) {
        decoded[field][values[k]] = {};
        const fieldRef = `${field}/${values[k]}`;
        let vector = weights.get(fieldRef);
        if (vector === undefined) weights.set(fieldRef, (vector = { pairs: [], vector: null }));
        vector.pairs.push([index, Number(values[k + 1])]);
        vector.vector = null;
      }
    });
    postings.set(term, decoded);
    return decoded;
  };
  const fieldRefs = () => pre.refs.flatMap((_, doc) => pre.fields.map((field) => `${field}/${doc}`));
  const isFieldRef = (key) => {
    const cut = typeof key === "string" ? key.indexOf("/") : -1;
    return cut > 0 && pre.fields.includes(key.slice(0, cut)) && Object.hasOwn(pre.refs, key.slice(cut + 1));
  };
  const fieldVector = (fieldRef) => {
    if (!isFieldRef(fieldRef)) return undefined;
    const vector = weights.get(fieldRef);
    if (vector === undefined) return new lunr.Vector([]); // none of the decoded terms: only a negated query asks
    if (vector.vector === null) {
      vector.pairs.sort((a, b) => a[0] - b[0]);
      vector.vector = new lunr.Vector(vector.pairs.flat());
    }
    return vector.vector;
  };
  const lazy = (get, has, keys) =>
    new Proxy(Object.create(null), {
      get: (_, key) => get(key),
      has: (_, key) => has(key),
      ownKeys: () => keys(),
      getOwnPropertyDescriptor: (_, key) =>
        has(key) ? { value: get(key), enumerable: true, configurable: true, writable: false } : undefined,
    });
  const allTerms = () => pre.shards.terms.flatMap((key) => Object.keys(hbShard("terms", key)));
  const invertedIndex = lazy(posting, (term) => raw(term) !== undefined, allTerms);
  const fieldVectors = lazy(fieldVector, isFieldRef, fieldRefs);
  // In iframe-worker's worker (on the page's thread), once every terms shard is loaded, the page's idle moments
  // decode the postings ahead of the reader, a slice at a time: decoded lazily, a broad query pays for them.
  if (hbInPage() && hbTermsLoaded !== null) {
    hbTermsLoaded.then(() => {
      const ahead = allTerms();
      let next = 0;
      const slice = (deadline) => {
        while (next < ahead.length && deadline.timeRemaining() > 1) posting(ahead[next++]);
        if (next < ahead.length) requestIdleCallback(slice);
      };
      requestIdleCallback(slice);
    });
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

// Where the offline copy's worker is iframe-worker's (file-worker.js's fallback), on the page's own thread, loading
// the index waits for the page to be idle (at most a second), so it never competes with the page's first paint and
// scroll. A real worker has no requestIdleCallback and loads at once.
self.__hbIdle = () =>
  new Promise((resolve) =>
    typeof requestIdleCallback === "function" ? requestIdleCallback(resolve, { timeout: 1000 }) : resolve(),
  );

// Only the newest query is answered: a reader types faster than a broad query is searched, and each keystroke
// sends one (the theme does not wait for a pause in typing). Queries that arrive while one is being searched wait
// their turn; of those, all but the last are stale by then, and their answers would only delay the last one's.
let hbLatest = null;
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// A query is answered twice where it has more groups than the page shows at once (the bundle renders ten, the rest
// as the reader scrolls): first with those ten highlighted, at once, then, unless a newer query arrives within
// HB_REST_AFTER_MS, with all HB_ALL_GROUPS highlighted. The page renders the second as it did the first: the same
// ten on screen, the teasers below them there before the reader scrolls to them. A broad query's highlighting is
// most of its time (a cold "co" in the offline copy: 100 of 190 ms), and the reader typing on waits for neither.
const HB_SHOWN_GROUPS = 10;
const HB_ALL_GROUPS = 30;
const HB_REST_AFTER_MS = 100;
let hbGroups = HB_ALL_GROUPS; // what a call of search() highlights: all, unless __hbLatest asks for fewer
// An answer that names missing shards (on the page's thread) is not the last: they load, and the query is searched
// again, unless a newer one arrived meanwhile. Where it has results (their titles only, their sections' shards
// missing) and early is set, it is shown while they load: the same list, the text of each result coming next.
const hbAnswer = async (message, handle, early) => {
  for (;;) {
    const answer = await handle(message);
    const missing = answer && answer.data && answer.data.missing;
    if (!missing) return answer;
    const { missing: _, ...data } = answer.data;
    if (early && data.items.length) postMessage({ ...answer, data });
    await hbLoad(missing);
    if (hbLatest !== message) return null;
  }
};
self.__hbLatest = async (message, handle) => {
  if (message.type !== 2) return handle(message);
  hbLatest = message;
  await wait(0);
  if (hbLatest !== message) return null;
  hbGroups = HB_SHOWN_GROUPS;
  let shown;
  try {
    shown = await hbAnswer(message, handle, true);
  } finally {
    hbGroups = HB_ALL_GROUPS;
  }
  if (!(shown && shown.data && shown.data.items && shown.data.items.length > HB_SHOWN_GROUPS)) return shown;
  postMessage(shown);
  await wait(HB_REST_AFTER_MS);
  return hbLatest === message ? hbAnswer(message, handle, false) : null;
};

// node search_equivalence.js SITE OFFLINE_SITE QUERIES_FILE
// Runs the built site's patched search worker in Node and prints, as JSON, for every query: whether the
// handbook's search method gives the theme's results for the query it searches (the same pages, each of the first
// 30 groups identical, highlights included; the order is the handbook's own), and whether the offline copy's prebuilt index (no token positions) gives
// exactly what an index built from that copy's search_index.json gives, highlights included; and how a one-letter
// query and queries that arrive together are answered.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");
const { fileURLToPath, pathToFileURL } = require("url");

// The worker as a real worker runs it, importScripts synchronous: with `prebuilt`, as the offline copy's blob:
// worker (file-worker.js), which gives it its own URL and has loaded the prebuilt index's core; its shards load as
// queries reach them. `loaded` counts the shard files each query made it load.
function loadWorker(site, prebuilt) {
  const workers = path.join(site, "assets", "javascripts", "workers");
  const [worker] = fs.readdirSync(workers).filter((f) => /^search\..*\.min\.js$/.test(f));
  const context = { console, performance, URL, TextEncoder, TextDecoder, setTimeout, clearTimeout };
  context.self = context;
  context.globalThis = context;
  let handler = null;
  const loaded = [];
  context.addEventListener = (type, fn) => { if (type === "message") handler = fn; };
  context.postMessage = () => {};
  context.importScripts = (...urls) => {
    for (const url of urls) {
      const file = url.startsWith("file:") ? fileURLToPath(url) : path.resolve(workers, url);
      if (file.includes(`${path.sep}prebuilt${path.sep}`)) loaded.push(path.relative(site, file));
      vm.runInContext(fs.readFileSync(file, "utf-8"), context, { filename: file });
    }
  };
  vm.createContext(context);
  if (prebuilt) {
    context.__hbBase = pathToFileURL(path.join(workers, worker)).href;
    context.importScripts(pathToFileURL(path.join(site, "search", "search_prebuilt.js")).href);
  }
  vm.runInContext(fs.readFileSync(path.join(workers, worker), "utf-8"), context, { filename: worker });
  return { context, handler: () => handler, loaded };
}

async function searcher(site, offline) {
  const { context, handler, loaded } = loadWorker(site, offline);
  let data;
  if (offline) {
    const src = fs.readFileSync(path.join(site, "search", "search_index.js"), "utf-8");
    data = JSON.parse(src.replace(/^var __index = /, "").replace(/;\s*$/, ""));
  } else {
    data = JSON.parse(fs.readFileSync(path.join(site, "search", "search_index.json"), "utf-8"));
  }
  data.options = { suggest: false };
  await handler()({ data: { type: 0, data } });
  context.__search.loaded = loaded;
  context.__search.hbPrepare = context.__hbPrepare;
  return context.__search;
}

const strip = (items) => JSON.parse(JSON.stringify(items, (k, v) => (k === "parent" ? undefined : v)));
const local = (loc) => loc.replace(/\.html(?=#|$)/, "/").replace(/\/index\/(?=#|$)/, "/").replace(/^index\/$/, "");
const locations = (items) => items.map((group) => group.map((doc) => local(doc.location)));
const article = (group) => local(group[0].location).split("#")[0];
let prepare = (query) => query;

(async () => {
  const [site, offlineSite, queriesFile] = process.argv.slice(2);
  const online = await searcher(site, false);
  prepare = online.hbPrepare;
  // the offline copy is a build of its own (file:// links): its prebuilt index against the index the browser
  // would build from that copy's own search_index.json
  const offline = offlineSite ? await searcher(offlineSite, true) : null;
  // A one-letter query is searched as that word, not as the prefix of every word (search_worker.js): the theme
  // given the same word as a required exact term ("+c") finds the same pages in the same order.
  const letter = {
    same_as_exact_word:  // the same pages (the handbook's method orders them its own way: hbRank)
      JSON.stringify(locations(strip(online.search("c").items)).map((g) => g[0].split("#")[0]).sort()) ===
      JSON.stringify(locations(strip(online.themeSearch("+c").items)).map((g) => g[0].split("#")[0]).sort()),
    groups: online.search("c").items.length,
    prefix_groups: online.themeSearch("c").items.length,
  };
  // A word typed up to a separator ("shape-") is searched as the words before it: the theme's empty clause ("-*")
  // matches every page.
  const separator = {
    theme_groups: (() => {  // the theme's own worker can throw on it (lunr, '_index' of undefined): -1
      try { return online.themeSearch("shape-").items.length; } catch (e) { return -1; }
    })(),
    groups: online.search("shape-").items.length,
    within_shape: (() => {
      const article = (group) => group[0].split("#")[0];
      const shape = new Set(locations(strip(online.search("shape").items)).map(article));
      return locations(strip(online.search("shape-").items)).every((group) => shape.has(article(group)));
    })(),
  };
  const offlineBuilt = offlineSite ? await searcher(offlineSite, false) : null;
  const out = [];
  for (const query of fs.readFileSync(queriesFile, "utf-8").split("\n").filter(Boolean)) {
    // The handbook's method searches the query without its stop words and numbers (__hbPrepare), and ranks the
    // listings below the pages and a page's names above its text (search_worker.js, hbRank): the theme, given the
    // same prepared query, finds the same pages, each page's sections highlighted alike; only their order differs.
    let t = performance.now();
    const theme = strip(online.themeSearch(prepare(query)).items);
    const themeMs = performance.now() - t;
    t = performance.now();
    const ours = strip(online.search(query).items).filter((group) => !/^https?:/.test(group[0].location));
    const oursMs = performance.now() - t;
    const byArticle = (items) => new Map(items.map((group) => [article(group), group]));
    const themeGroups = byArticle(theme);
    const sameGroup = (group) => {
      const other = themeGroups.get(article(group));
      if (other === undefined) return false;
      const docs = (g) => JSON.stringify([...g].map(({ score, ...doc }) => doc).sort((a, b) => (a.location < b.location ? -1 : 1)));
      return docs(group) === docs(other);
    };
    const row = {
      query,
      groups: ours.length,
      theme_groups: theme.length,
      same_pages:
        JSON.stringify(locations(ours).map((g) => g[0].split("#")[0]).sort()) ===
        JSON.stringify(locations(theme).map((g) => g[0].split("#")[0]).sort()),
      first_30_identical: ours.slice(0, 30).every(sameGroup),
      theme_ms: +themeMs.toFixed(2),
      ours_ms: +oursMs.toFixed(2),
      theme_bytes: JSON.stringify(theme).length,
      ours_bytes: JSON.stringify(ours).length,
    };
    if (offline) {
      t = performance.now();
      offline.loaded.length = 0;
      const prebuilt = JSON.stringify(strip(offline.search(query).items));
      row.offline_shards = offline.loaded.length;
      row.offline_ms = +(performance.now() - t).toFixed(2);
      row.offline_identical = prebuilt === JSON.stringify(strip(offlineBuilt.search(query).items));
    }
    out.push(row);
  }
  // Only the newest of the queries waiting is answered: three sent at once, as fast typing does, get the last one's.
  const { context, handler } = loadWorker(site, false);
  const answers = [];
  context.postMessage = (message) => answers.push(message);
  const data = JSON.parse(fs.readFileSync(path.join(site, "search", "search_index.json"), "utf-8"));
  data.options = { suggest: false };
  await handler()({ data: { type: 0, data } });
  answers.length = 0;
  // It is answered twice (search_worker.js, __hbLatest): at once with the groups the page shows first highlighted,
  // the same groups in the same order, then whole.
  await Promise.all(["con", "conc", "concat"].map((query) => handler()({ data: { type: 2, data: query } })));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const whole = strip(context.__search.search("concat").items);
  const [shown, last] = answers.map((answer) => strip(answer.data.items));
  const latest = {
    answers: answers.length,
    is_last: last !== undefined && JSON.stringify(last) === JSON.stringify(whole),
    first_shows_the_same: shown !== undefined && whole.length > 10 &&
      JSON.stringify(locations(shown)) === JSON.stringify(locations(whole)) &&
      JSON.stringify(shown.slice(0, 10)) === JSON.stringify(whole.slice(0, 10)) &&
      JSON.stringify(shown.slice(10, 30)) !== JSON.stringify(whole.slice(10, 30)),
  };
  console.log(JSON.stringify({ rows: out, letter, separator, latest }));
})().catch((err) => { console.error(err); process.exit(1); });

// Typeset math at build time with the vendored KaTeX, so no page runs KaTeX in the reader's browser.
// Run by site/math.py: node render_math.js KATEX_JS < [[tex, display], ...] > [html, ...]
"use strict";
const fs = require("fs");
const katex = require(process.argv[2]);
const formulas = JSON.parse(fs.readFileSync(0, "utf-8"));
const out = formulas.map(([tex, display]) => katex.renderToString(tex, { displayMode: display, throwOnError: false }));
process.stdout.write(JSON.stringify(out));

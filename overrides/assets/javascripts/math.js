// Render the math pymdownx.arithmatex marked (generic mode: \( \) inline, \[ \] display) with the vendored KaTeX.
// Only the .arithmatex elements, so a "$" in prose or code is never taken for math.
document$.subscribe(function () {
  document.querySelectorAll(".arithmatex").forEach(function (el) {
    renderMathInElement(el, {
      delimiters: [
        { left: "\\[", right: "\\]", display: true },
        { left: "\\(", right: "\\)", display: false },
      ],
      throwOnError: false,
    });
  });
});

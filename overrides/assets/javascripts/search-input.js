// mkdocs-material searches on keyup; text that arrives without one (an IME committing Chinese, a paste from the
// context menu) would not be searched. Repeat such input as a keyup so the search sees it.
document.addEventListener("input", function (event) {
  if (event.target.matches && event.target.matches(".md-search__input") && !event.isComposing) {
    event.target.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true }));
  }
});

// "Copy with setup" on every example of a page: the device line, every earlier block that sets something up (not
// the ones that fail on purpose) and this block, so the copied code runs in a fresh Python by itself. The blocks'
// code comes from the page (<script class="hb-blocks">, written by the render step); each example is the code block
// after its anchor (#example-LINE). Material's clipboard handles buttons with data-clipboard-text.
(function () {
  function setup() {
    var data = document.querySelector("script.hb-blocks");
    if (!data) return;
    var page = JSON.parse(data.textContent);
    var chosen = [page.setup];
    page.blocks.forEach(function (block) {
      var anchor = document.getElementById("example-" + block.line);
      var box = anchor && anchor.parentElement;
      var next = box && box.nextElementSibling;
      while (next && !next.querySelector("pre")) next = next.nextElementSibling;
      var highlight = next && next.querySelector(".highlight, pre");
      if (highlight && !highlight.querySelector(".hb-copy-setup")) {
        var button = document.createElement("button");
        button.className = "md-clipboard md-icon hb-copy-setup";
        button.title = document.documentElement.lang === "zh" ? "连同前面的设置一起复制" : "Copy with setup";
        button.setAttribute("data-clipboard-text", chosen.concat([block.code]).join("\n\n") + "\n");
        button.textContent = "⧉";
        highlight.style.position = "relative";
        highlight.appendChild(button);
      }
      if (block.setup) chosen.push(block.code);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();

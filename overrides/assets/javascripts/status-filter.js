// The Verification status page: filter its table of pages by module, CPU state and machine (columns 2, 3, 5).
(function () {
  function setup() {
    var box = document.querySelector(".hb-filter");
    var table = box && box.parentElement.querySelector("table");
    if (!table) return;
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var filters = [["module", 1], ["CPU", 2], ["machine", 4]].map(function (f) {
      var values = {};
      rows.forEach(function (r) {
        r.cells[f[1]].textContent.split(", ").forEach(function (v) { if (v.trim()) values[v.trim()] = 1; });
      });
      var label = document.createElement("label");
      var select = document.createElement("select");
      select.innerHTML = '<option value="">all</option>' + Object.keys(values).sort().map(function (v) {
        return '<option>' + v.replace(/&/g, "&amp;").replace(/</g, "&lt;") + '</option>';
      }).join("");
      label.append(f[0] + " ", select);
      box.append(label, " ");
      return { select: select, column: f[1] };
    });
    var count = document.createElement("span");
    box.append(count);
    function apply() {
      var shown = 0;
      rows.forEach(function (r) {
        var ok = filters.every(function (f) {
          return !f.select.value || r.cells[f.column].textContent.split(", ").indexOf(f.select.value) >= 0;
        });
        r.hidden = !ok;
        shown += ok;
      });
      count.textContent = shown + " of " + rows.length + " pages";
    }
    filters.forEach(function (f) { f.select.addEventListener("change", apply); });
    box.hidden = false;
    apply();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();

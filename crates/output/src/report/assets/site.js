// The results site's script: progressive enhancement, every page reads without it.
// Tables of class "data" filter (a box above them; "#filterN=text" in the address fills the
// N-th table's box), sort (a click on a heading; again for the other way) and show or hide
// columns ("columns"); their statistics rows (class "stats") stay at the bottom, unfiltered.
// Scatter charts name the instance under the pointer. Hand-written, no library, no download.
(function () {
  "use strict";
  var each = function (list, f) { Array.prototype.forEach.call(list, f); };
  var text = function (cell) { return cell ? (cell.textContent || "").trim() : ""; };
  var number = function (s) {
    var m = s.replace(/,/g, "").match(/^[-+]?\d+(\.\d+)?/);
    return m ? parseFloat(m[0]) : NaN;
  };
  var element = function (tag, props) {
    var e = document.createElement(tag);
    Object.keys(props || {}).forEach(function (k) { e[k] = props[k]; });
    return e;
  };

  function enhance(table, n) {
    var rows = Array.prototype.slice.call(table.rows);
    if (!rows.length) return;
    var head = rows[0];
    var body = rows.slice(1).filter(function (r) { return !r.classList.contains("stats"); });
    var stats = rows.slice(1).filter(function (r) { return r.classList.contains("stats"); });
    var parent = (body[0] || stats[0] || head).parentNode;
    var bar = element("div", { className: "tablebar" });
    var input = element("input", { type: "search", placeholder: "filter rows" });
    input.setAttribute("aria-label", "filter the rows of this table");
    var count = element("span", { className: "count" });
    var columns = element("details");
    columns.appendChild(element("summary", { textContent: "columns" }));
    var show = function (i, on) {
      rows.forEach(function (r) { if (r.cells[i]) r.cells[i].style.display = on ? "" : "none"; });
    };
    each(head.cells, function (th, i) {
      var label = element("label");
      var box = element("input", { type: "checkbox", checked: true });
      box.addEventListener("change", function () { show(i, box.checked); });
      label.appendChild(box);
      label.appendChild(document.createTextNode(" " + text(th)));
      columns.appendChild(label);
    });
    bar.appendChild(input);
    bar.appendChild(count);
    bar.appendChild(columns);
    table.parentNode.insertBefore(bar, table);
    var filter = function () {
      var q = input.value.toLowerCase(), shown = 0;
      body.forEach(function (r) {
        var ok = !q || r.textContent.toLowerCase().indexOf(q) >= 0;
        r.style.display = ok ? "" : "none";
        shown += ok ? 1 : 0;
      });
      count.textContent = shown + " of " + body.length + " rows";
    };
    input.addEventListener("input", filter);
    var key = "filter" + n + "=";
    location.hash.slice(1).split("&").forEach(function (p) {
      if (p.indexOf(key) === 0) input.value = decodeURIComponent(p.slice(key.length));
    });
    filter();
    each(head.cells, function (th, i) {
      th.classList.add("sortable");
      th.addEventListener("click", function (ev) {
        if (ev.target.tagName === "A") return;
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        each(head.cells, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
        body.map(function (r) { var t = text(r.cells[i]); return [r, number(t), t]; })
          .sort(function (a, b) {
            var c = !isNaN(a[1]) && !isNaN(b[1]) ? a[1] - b[1]
              : a[2].localeCompare(b[2], undefined, { numeric: true });
            return dir * c;
          })
          .forEach(function (k) { parent.appendChild(k[0]); });
        stats.forEach(function (r) { parent.appendChild(r); });
      });
    });
  }

  function hover(div) {
    var names = div.getAttribute("data-names").split("|");
    var tip = element("div", { className: "tip", hidden: true });
    document.body.appendChild(tip);
    each(div.querySelectorAll("svg.scatter"), function (svg) {
      var points = [];
      each(svg.querySelectorAll("path[data-i]"), function (path) {
        var ids = path.getAttribute("data-i").split(" ");
        var moves = path.getAttribute("d").match(/M[-\d.]+ [-\d.]+/g) || [];
        moves.forEach(function (m, k) {
          var xy = m.slice(1).split(" ");
          points.push([+xy[0], +xy[1], names[+ids[k]], path.getAttribute("class")]);
        });
      });
      var title = svg.querySelector("title");
      var tools = title ? title.textContent.split(":")[0] : "";
      svg.addEventListener("mousemove", function (ev) {
        var r = svg.getBoundingClientRect(), box = svg.viewBox.baseVal;
        var x = (ev.clientX - r.left) * box.width / r.width;
        var y = (ev.clientY - r.top) * box.height / r.height;
        var best = null, nearest = 36;
        points.forEach(function (p) {
          var d = (p[0] - x) * (p[0] - x) + (p[1] - y) * (p[1] - y);
          if (d < nearest) { nearest = d; best = p; }
        });
        if (!best) { tip.hidden = true; return; }
        tip.textContent = best[2] + ": " + tools + (best[3] === "disagree" ? ", different values" : "");
        tip.style.left = ev.pageX + 12 + "px";
        tip.style.top = ev.pageY + 12 + "px";
        tip.hidden = false;
      });
      svg.addEventListener("mouseleave", function () { tip.hidden = true; });
    });
  }

  each(document.querySelectorAll("table.data"), enhance);
  each(document.querySelectorAll("div.charts[data-names]"), hover);
})();

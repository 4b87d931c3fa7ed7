// The results site's script: progressive enhancement, every page reads without it.
// Tables of class "data" filter (a box above them; "#filterN=text" in the address fills the
// N-th table's box), sort (a click on a heading; again for the other way) and show or hide
// columns ("columns"); their statistics rows (class "stats") stay at the bottom, unfiltered.
// Charts name the instance under the pointer; where the runs have pages (data-runs), a click on
// a point opens its run (a scatter point: a choice of its two runs). Hand-written, no library,
// no download.
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

  // The run pages of a charts page's points (data-runs: per instance, each tool's page or "-").
  function runsOf(div) {
    var runs = div.getAttribute("data-runs");
    if (!runs) return null;
    return runs.split("|").map(function (row) {
      return row.split(" ").map(function (s) { return s === "-" ? null : "runs/" + s + ".html"; });
    });
  }

  // The vertices of a chart's paths: [x, y, path, index within its path].
  function vertices(paths) {
    var out = [];
    paths.forEach(function (path) {
      (path.getAttribute("d").match(/[ML][-\d.]+ [-\d.]+/g) || []).forEach(function (m, k) {
        var xy = m.slice(1).split(" ");
        out.push([+xy[0], +xy[1], path, k]);
      });
    });
    return out;
  }

  // The point nearest the pointer (within 6 pixels of the chart's drawing), or null.
  function nearest(svg, ev, points) {
    var r = svg.getBoundingClientRect(), box = svg.viewBox.baseVal;
    var x = (ev.clientX - r.left) * box.width / r.width;
    var y = (ev.clientY - r.top) * box.height / r.height;
    var best = null, least = 36;
    points.forEach(function (p) {
      var d = (p[0] - x) * (p[0] - x) + (p[1] - y) * (p[1] - y);
      if (d < least) { least = d; best = p; }
    });
    return best;
  }

  function charts(div) {
    var names = div.getAttribute("data-names").split("|");
    var runs = runsOf(div);
    var tools = (div.getAttribute("data-tools") || "").split("|");
    var tip = element("div", { className: "tip", hidden: true });
    document.body.appendChild(tip);
    var pick = element("div", { className: "pick", hidden: true });
    document.body.appendChild(pick);
    document.addEventListener("click", function (ev) { if (!pick.contains(ev.target)) pick.hidden = true; });
    document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") pick.hidden = true; });
    var show = function (ev, text) {
      tip.textContent = text;
      tip.style.left = ev.pageX + 12 + "px";
      tip.style.top = ev.pageY + 12 + "px";
      tip.hidden = false;
    };
    each(div.querySelectorAll("svg.scatter"), function (svg) {
      var points = vertices(Array.prototype.slice.call(svg.querySelectorAll("path[data-i]")))
        .map(function (v) {
          var label = +v[2].getAttribute("data-i").split(" ")[v[3]];
          return [v[0], v[1], label, v[2].getAttribute("class")];
        });
      var title = svg.querySelector("title");
      var pair = title ? title.textContent.split(":")[0] : "";
      var figure = svg.parentNode;
      var columns = [+figure.getAttribute("data-x"), +figure.getAttribute("data-y")];
      svg.addEventListener("mousemove", function (ev) {
        var best = nearest(svg, ev, points);
        if (!best) { tip.hidden = true; svg.style.cursor = ""; return; }
        svg.style.cursor = runs ? "pointer" : "";
        show(ev, names[best[2]] + ": " + pair + (best[3] === "disagree" ? ", different values" : ""));
      });
      svg.addEventListener("mouseleave", function () { tip.hidden = true; });
      if (!runs) return;
      // A click on a point: its two runs to choose from.
      svg.addEventListener("click", function (ev) {
        var best = nearest(svg, ev, points);
        if (!best) return;
        ev.stopPropagation();
        pick.textContent = "";
        pick.appendChild(element("b", { textContent: names[best[2]] }));
        columns.forEach(function (c) {
          var href = (runs[best[2]] || [])[c];
          var line = element("div");
          if (href) line.appendChild(element("a", { href: href, textContent: tools[c] + "'s run" }));
          else line.textContent = tools[c] + ": no run page";
          pick.appendChild(line);
        });
        pick.style.left = ev.pageX + 8 + "px";
        pick.style.top = ev.pageY + 8 + "px";
        pick.hidden = false;
      });
    });
    // The cactus plot: its n-th point of a tool's line is the tool's n-th fastest solved run.
    var figure = document.querySelector("figure[data-order]");
    var svg = figure && figure.querySelector("svg.cactus");
    if (!runs || !svg) return;
    var order = figure.getAttribute("data-order").split("|").map(function (s) {
      return s ? s.split(" ").map(Number) : [];
    });
    var columns = [];
    order.forEach(function (labels, c) { if (labels.length) columns.push(c); });
    var lines = Array.prototype.slice.call(svg.querySelectorAll("path.line"));
    var points = vertices(lines).map(function (v) {
      var c = columns[lines.indexOf(v[2])];
      return [v[0], v[1], order[c][v[3]], c];
    });
    svg.addEventListener("mousemove", function (ev) {
      var best = nearest(svg, ev, points);
      if (!best) { tip.hidden = true; svg.style.cursor = ""; return; }
      svg.style.cursor = "pointer";
      show(ev, names[best[2]] + ": " + tools[best[3]]);
    });
    svg.addEventListener("mouseleave", function () { tip.hidden = true; });
    svg.addEventListener("click", function (ev) {
      var best = nearest(svg, ev, points);
      var href = best && (runs[best[2]] || [])[best[3]];
      if (href) location.href = href;
    });
  }

  each(document.querySelectorAll("table.data"), enhance);
  each(document.querySelectorAll("div.charts[data-names]"), charts);
})();

// Renders a loopbench page from the JSON blob in #loopbench-data. Everything shown is
// set as text (textContent, never innerHTML): what an agent wrote cannot become markup.
// Trials are paginated, so that a run of 10,000 trials renders only the page in view.
// A large run's page holds a summary of each session; the sessions themselves are in
// files beside it (data.timelines), each loaded by a script element when one of its
// trials is shown, and each trial's steps in a file of its own there, loaded when one of
// its sessions' steps is opened.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("loopbench-data").textContent);
  var main = document.getElementById("main");

  // What shows as nothing, or reorders the text around it, is shown as an escape, as a
  // terminal printout shows it (src/terminal.rs): control characters but line feed and
  // tab, format characters (zero-width space, direction marks and overrides, ...), the
  // line and paragraph separators and the other default-ignorable code points. So
  // "F1" followed by a zero-width space reads "F1\u{200b}", never "F1".
  var INVISIBLE = /[\0-\x08\x0B-\x1F\x7F-\x9F\p{Cf}\p{Zl}\p{Zp}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/gu;

  function visible(text) {
    return text.replace(INVISIBLE, function (c) {
      var code = c.codePointAt(0);
      if (code === 0x1b) return "\\e";
      if (code === 0x0d) return "\\r";
      var hex = code.toString(16);
      if (code < 0x100) return "\\x" + ("0" + hex).slice(-2);
      return "\\u{" + ("000" + hex).slice(-Math.max(4, hex.length)) + "}";
    });
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = visible(String(text));
    return node;
  }

  function section(id, title) {
    var s = el("section");
    s.id = id;
    s.appendChild(el("h2", null, title));
    main.appendChild(s);
    return s;
  }

  // --- notes and the verdict ---------------------------------------------------------
  data.notes.forEach(function (note) {
    main.appendChild(el("p", "note", note));
  });

  if (data.verdict) {
    var v = data.verdict;
    var vs = section("verdict", "Verdict");
    vs.appendChild(el("p", null, v.heading + ":"));
    var ul = el("ul", "verdict");
    v.lines.forEach(function (line) {
      var li = el("li");
      li.setAttribute("data-metric", line.metric);
      li.appendChild(el("strong", null, line.metric));
      if (line.worse) li.appendChild(el("span", "worse", "worse: " + line.worse));
      if (line.better) li.appendChild(el("span", "better", "better: " + line.better));
      ul.appendChild(li);
    });
    ul.appendChild(el("li", "rest", v.rest));
    vs.appendChild(ul);
    if (v.sequential) vs.appendChild(el("p", "sequential", v.sequential));
    if (v.warnings.length) {
      vs.appendChild(el("p", null, "Sample size:"));
      var wl = el("ul", "warnings");
      v.warnings.forEach(function (w) { wl.appendChild(el("li", null, w)); });
      vs.appendChild(wl);
    }
    if (v.unobservable) {
      vs.appendChild(el("p", null, "Unobservable sessions (out of the list-based rates):"));
      var ol = el("ul", "failures");
      v.unobservable.forEach(function (u) { ol.appendChild(el("li", null, u)); });
      vs.appendChild(ol);
    }
    if (v.agent_failures) {
      vs.appendChild(el("p", null, "Failures of the agents (counted):"));
      var al = el("ul", "failures");
      v.agent_failures.forEach(function (f) { al.appendChild(el("li", null, f)); });
      vs.appendChild(al);
    }
    if (v.failures) {
      vs.appendChild(el("p", null, "Failures outside the agents (not counted):"));
      var fl = el("ul", "failures");
      v.failures.forEach(function (f) { fl.appendChild(el("li", null, f)); });
      vs.appendChild(fl);
    }
  }

  // --- tables with sortable columns ----------------------------------------------------
  function sortable(spec) {
    var wrap = el("div", "table");
    wrap.setAttribute("data-table", spec.id);
    wrap.appendChild(el("h3", null, spec.title));
    if (spec.note) wrap.appendChild(el("p", "meaning", spec.note));
    var table = el("table");
    var thead = el("thead");
    var tr = el("tr");
    var tbody = el("tbody");
    var rows = spec.rows.slice();
    var sorted = { column: -1, descending: false };
    function fill() {
      tbody.textContent = "";
      rows.forEach(function (row) {
        var r = el("tr");
        row.forEach(function (cell) {
          var td = el("td", cell.v === null ? "text" : "num", cell.t);
          r.appendChild(td);
        });
        tbody.appendChild(r);
      });
    }
    function key(cell) {
      return cell.v === null ? cell.t : cell.v;
    }
    spec.columns.forEach(function (name, i) {
      var th = el("th");
      var button = el("button", "sort", name);
      button.type = "button";
      button.title = "sort by " + name;
      button.addEventListener("click", function () {
        sorted.descending = sorted.column === i ? !sorted.descending : false;
        sorted.column = i;
        rows.sort(function (a, b) {
          var x = key(a[i]);
          var y = key(b[i]);
          // Empty cells last, whichever the direction.
          if (a[i].t === "" && b[i].t !== "") return 1;
          if (b[i].t === "" && a[i].t !== "") return -1;
          var c = x < y ? -1 : x > y ? 1 : 0;
          return sorted.descending ? -c : c;
        });
        Array.prototype.forEach.call(tr.children, function (h, j) {
          h.setAttribute("aria-sort", j === i ? (sorted.descending ? "descending" : "ascending") : "none");
        });
        fill();
      });
      th.setAttribute("aria-sort", "none");
      th.appendChild(button);
      tr.appendChild(th);
    });
    thead.appendChild(tr);
    table.appendChild(thead);
    table.appendChild(tbody);
    fill();
    wrap.appendChild(table);
    return wrap;
  }

  if (data.tables.length) {
    var ts = section("tables", data.kind === "weekly" ? "Trends" : "Tables");
    ts.appendChild(el("p", "hint", "Click a column heading to sort by it; click again to reverse."));
    data.tables.forEach(function (spec) { ts.appendChild(sortable(spec)); });
  }

  if (data.plots.length) {
    var ps = section("plots", "Plots");
    var grid = el("div", "plots");
    data.plots.forEach(function (plot) {
      var fig = el("figure");
      var img = el("img");
      img.alt = plot.name;
      img.src = plot.src;
      fig.appendChild(img);
      fig.appendChild(el("figcaption", null, plot.name));
      grid.appendChild(fig);
    });
    ps.appendChild(grid);
  }

  if (data.kind === "run") trials();
  document.body.setAttribute("data-ready", "1");

  // --- every trial's timeline, filterable ---------------------------------------------
  function trials() {
    var S = data.sessions;
    var T = data.trials;
    var sc = index(S.columns);
    var tc = index(T.columns);
    // The timelines in files beside the page: each file's state, and what came in.
    var side = data.timelines || null;
    var files = {};
    var full = {};
    var fc = null;
    if (side) {
      window.loopbenchTimelines = function (n, table) {
        fc = index(table.columns);
        var touched = {};
        table.rows.forEach(function (row) {
          var id = row[fc.trial_id];
          (full[id] = full[id] || []).push(row);
          touched[id] = true;
        });
        Object.keys(touched).forEach(function (id) {
          full[id].sort(function (a, b) { return a[fc.session] - b[fc.session]; });
        });
        files[n] = "loaded";
        render();
      };
    }
    function request(n) {
      if (files[n]) return;
      files[n] = "loading";
      loadScript(side + "/" + String(n).padStart(4, "0") + ".js", function () {
        files[n] = "failed";
        render();
      });
    }
    // The steps beside the page: each trial's file's state, the steps that came in, and
    // the sessions whose steps were opened (kept open when the list is drawn again).
    var stepFiles = {};
    var sideSteps = {};
    var opened = {};
    if (side) {
      window.loopbenchSteps = function (n, steps) {
        Object.keys(steps).forEach(function (key) { sideSteps[key] = steps[key]; });
        stepFiles[n] = "loaded";
        render();
      };
    }
    function requestSteps(n) {
      if (stepFiles[n]) return;
      stepFiles[n] = "loading";
      loadScript(side + "/steps-" + String(n).padStart(5, "0") + ".js", function () {
        stepFiles[n] = "failed";
        render();
      });
    }
    function loadScript(src, failed) {
      var script = document.createElement("script");
      script.src = src;
      script.onerror = failed;
      document.head.appendChild(script);
    }
    var metricBit = {};
    data.metrics.forEach(function (m, i) { metricBit[m.name] = Math.pow(2, i); });

    // Trials in trials.csv order, then any trial that has sessions but no trial row.
    var order = [];
    var byTrial = {};
    T.rows.forEach(function (row, i) {
      var id = row[tc.trial_id];
      byTrial[id] = { id: id, row: row, index: i, sessions: [] };
      order.push(byTrial[id]);
    });
    S.rows.forEach(function (row) {
      var id = row[sc.trial_id];
      if (!byTrial[id]) {
        byTrial[id] = { id: id, row: null, sessions: [] };
        order.push(byTrial[id]);
      }
      byTrial[id].sessions.push(row);
    });
    order.forEach(function (t) {
      t.sessions.sort(function (a, b) { return a[sc.session] - b[sc.session]; });
      var first = t.row || t.sessions[0];
      var cols = t.row ? tc : sc;
      t.arm = first[cols.arm];
      t.task = first[cols.task];
    });

    var s = section("trials", "Trials");
    s.appendChild(el("p", "hint",
      "Every trial as a timeline of its sessions: outcome, counts and, where the record has it, " +
      "the evidence behind each count. Filter by arm, task and metric: a metric shows the " +
      "sessions (or trials) that count against their arm on it: its events for a rate where " +
      "lower is better, units without the event where higher is better."));
    var form = el("form", "filters");
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    function select(name, label, options) {
      var l = el("label", null, label + " ");
      var sel = el("select");
      sel.name = name;
      sel.id = "filter-" + name;
      options.forEach(function (o) {
        var opt = el("option", null, o[1]);
        opt.value = o[0];
        sel.appendChild(opt);
      });
      l.appendChild(sel);
      form.appendChild(l);
      sel.addEventListener("change", function () {
        state[name] = sel.value;
        if (name !== "page") state.page = "1";
        save();
        render();
      });
      return sel;
    }
    function distinct(key) {
      var seen = {};
      var out = [];
      order.forEach(function (t) {
        if (!seen[t[key]]) { seen[t[key]] = true; out.push(t[key]); }
      });
      return out;
    }
    var all = [["", "all"]];
    var selects = {
      arm: select("arm", "arm", all.concat(distinct("arm").map(function (a) { return [a, a]; }))),
      task: select("task", "task", all.concat(distinct("task").map(function (a) { return [a, a]; }))),
      metric: select("metric", "counted against on", [["", "any (every session)"]].concat(
        data.metrics.map(function (m) { return [m.name, m.name + " (" + m.unit + "s, " + m.better + " is better)"]; }))),
      per: select("per", "trials per page", [["20", "20"], ["100", "100"], ["500", "500"], ["all", "all"]])
    };
    s.appendChild(form);
    var count = el("p", "count");
    count.id = "match-count";
    s.appendChild(count);
    var pager = el("div", "pager");
    var prev = el("button", null, "previous");
    prev.type = "button";
    var where = el("span", "where");
    var next = el("button", null, "next");
    next.type = "button";
    pager.appendChild(prev);
    pager.appendChild(where);
    pager.appendChild(next);
    s.appendChild(pager);
    var list = el("div", "trial-list");
    list.id = "trial-list";
    s.appendChild(list);
    prev.addEventListener("click", function () { state.page = String(Number(state.page) - 1); save(); render(); });
    next.addEventListener("click", function () { state.page = String(Number(state.page) + 1); save(); render(); });

    var state = {};
    function load() {
      var params = new URLSearchParams(location.hash.replace(/^#/, ""));
      state = {
        arm: params.get("arm") || "",
        task: params.get("task") || "",
        metric: params.get("metric") || "",
        per: params.get("per") || "20",
        page: params.get("page") || "1",
        open: params.get("open") || ""
      };
      ["arm", "task", "metric", "per"].forEach(function (k) {
        selects[k].value = state[k];
        if (selects[k].value !== state[k]) { state[k] = selects[k].options[0].value; selects[k].value = state[k]; }
      });
    }
    function save() {
      var params = new URLSearchParams();
      Object.keys(state).forEach(function (k) { if (state[k]) params.set(k, state[k]); });
      history.replaceState(null, "", "#" + params.toString());
    }
    window.addEventListener("hashchange", function () { load(); render(); });

    function metricOf(name) {
      for (var i = 0; i < data.metrics.length; i++) if (data.metrics[i].name === name) return data.metrics[i];
      return null;
    }
    function against(row, cols, bit) {
      // A bitmask above 2^31 cannot use the bitwise operators.
      return Math.floor(row[cols.against] / bit) % 2 === 1;
    }

    function render() {
      var metric = metricOf(state.metric);
      var bit = metric ? metricBit[metric.name] : 0;
      var matched = [];
      var hits = 0;
      order.forEach(function (t) {
        if (state.arm && t.arm !== state.arm) return;
        if (state.task && t.task !== state.task) return;
        var m = { trial: t, hit: null };
        if (metric && metric.unit === "session") {
          m.hit = t.sessions.map(function (row) { return against(row, sc, bit); });
          var n = m.hit.filter(Boolean).length;
          if (!n) return;
          hits += n;
        } else if (metric) {
          if (!t.row || !against(t.row, tc, bit)) return;
          hits += 1;
        } else {
          hits += t.sessions.length;
        }
        matched.push(m);
      });
      var per = state.per === "all" ? Math.max(matched.length, 1) : Number(state.per);
      var pages = Math.max(1, Math.ceil(matched.length / per));
      var page = Math.min(Math.max(1, Number(state.page) || 1), pages);
      state.page = String(page);
      var what = !metric ? "sessions"
        : metric.unit === "session" ? "sessions counted against their arm on " + metric.name
        : "trials counted against their arm on " + metric.name;
      count.textContent = matched.length + " trials; " + hits + " " + what;
      count.setAttribute("data-trials", String(matched.length));
      count.setAttribute("data-hits", String(hits));
      where.textContent = "page " + page + " of " + pages;
      prev.disabled = page <= 1;
      next.disabled = page >= pages;
      list.textContent = "";
      matched.slice((page - 1) * per, page * per).forEach(function (m) {
        list.appendChild(trialBlock(m.trial, m.hit, metric));
      });
    }

    function trialBlock(t, hit, metric) {
      var block = el("div", "trial");
      block.setAttribute("data-trial", t.id);
      block.setAttribute("data-arm", t.arm);
      block.setAttribute("data-task", t.task);
      var head = el("div", "trial-head");
      head.appendChild(el("strong", null, t.id));
      if (t.row) {
        var r = t.row;
        var bits = [
          "ended " + r[tc.ended_by],
          "features " + r[tc.features_verified] + " / " + r[tc.features_total],
          r[tc.sessions] + " sessions"
        ];
        if (r[tc.premature_victory] === true) bits.push("premature victory");
        if (r[tc.error]) bits.push("error: " + r[tc.error]);
        head.appendChild(el("span", null, bits.join(" · ")));
      } else {
        head.appendChild(el("span", null, "unfinished (no trial record)"));
      }
      if (metric && metric.unit === "trial") block.classList.add("hit");
      block.appendChild(head);
      var line = el("ol", "timeline");
      var rows = t.sessions;
      var cols = sc;
      if (side) {
        var missing = [];
        t.sessions.forEach(function (row) {
          var n = row[sc.timeline];
          if (files[n] !== "loaded" && missing.indexOf(n) < 0) missing.push(n);
        });
        if (missing.length) {
          var failed = missing.some(function (n) { return files[n] === "failed"; });
          line.appendChild(el("li", failed ? "error" : "loading", failed
            ? "the timeline could not be loaded from " + side + "/ beside this page"
            : "loading the timeline"));
          missing.forEach(request);
          rows = [];
        } else {
          rows = full[t.id] || [];
          cols = fc;
        }
      }
      rows.forEach(function (row, i) {
        line.appendChild(sessionBlock(row, hit ? hit[i] : null, cols));
      });
      block.appendChild(line);
      return block;
    }

    function sessionBlock(row, hit, cols) {
      var li = el("li", "session");
      if (hit === true) li.classList.add("hit");
      if (hit === false) li.classList.add("dim");
      li.setAttribute("data-trial", row[cols.trial_id]);
      li.setAttribute("data-session", String(row[cols.session]));
      li.classList.add("outcome-" + String(row[cols.outcome]).replace(/[^a-z_]/g, ""));
      li.appendChild(el("div", "s-head", "S" + row[cols.session] + " " + row[cols.kind] + " · " + row[cols.outcome]));
      var counts = el("ul", "counts");
      data.shown.forEach(function (c) {
        var v = row[cols[c]];
        if (v === null || v === undefined || v === 0) return;
        var item = el("li", typeof v === "boolean" ? (v ? "yes" : "no") : "n",
          typeof v === "boolean" ? (v ? c : "not " + c) : c + " " + v);
        counts.appendChild(item);
      });
      li.appendChild(counts);
      if (cols.error !== undefined && row[cols.error]) li.appendChild(el("p", "error", row[cols.error]));
      var ev = cols.evidence !== undefined ? row[cols.evidence] : null;
      if (ev && typeof ev === "object") li.appendChild(evidence(ev));
      var key = row[cols.trial_id] + "#" + row[cols.session];
      // `#open=TRIAL_ID`: that trial's sessions shown unfolded into their steps.
      var open = state.open !== "" && state.open === row[cols.trial_id];
      var steps = data.steps && data.steps[key];
      if (steps) {
        var tj = trajectory(steps);
        if (open) tj.open = true;
        li.appendChild(tj);
      } else if (cols.steps !== undefined && row[cols.steps]) {
        li.appendChild(trajectoryBeside(key, row[cols.steps], open || opened[key] === true));
      }
      return li;
    }

    // A session's trajectory whose steps are in its trial's file beside the page: folded
    // with what the timeline's row says of it (entries, counted), the file loaded when
    // it is opened, and then drawn as one held in the page.
    function trajectoryBeside(key, sum, open) {
      var d;
      if (stepFiles[sum.f] === "loaded" && sideSteps[key]) {
        d = trajectory(sideSteps[key]);
      } else {
        d = el("details", "trajectory");
        d.appendChild(el("summary", null, "what the agent did: " + sum.n + " entries" +
          (sum.c ? ", " + sum.c + " counted" : "")));
        if (stepFiles[sum.f] === "failed") {
          d.appendChild(el("p", "error", "the steps could not be loaded from " + side + "/ beside this page"));
        } else if (stepFiles[sum.f] === "loading" || open) {
          d.appendChild(el("p", "loading", "loading the steps"));
        }
      }
      if (open) {
        d.open = true;
        requestSteps(sum.f);
      }
      d.addEventListener("toggle", function () {
        opened[key] = d.open;
        if (d.open && stepFiles[sum.f] !== "loaded") requestSteps(sum.f);
      });
      return d;
    }

    // A session's trajectory: folded into one details element, each entry a line; a
    // tool call folded to its tool, first argument and its result's status, unfolded
    // into its arguments and output; the entries a metric counted marked with why.
    function trajectory(steps) {
      var d = el("details", "trajectory");
      var counted = steps.filter(function (s) { return s.m.length; }).length;
      d.appendChild(el("summary", null, "what the agent did: " + steps.length + " entries" +
        (counted ? ", " + counted + " counted" : "")));
      var only = el("label", "only-counted");
      var box = el("input");
      box.type = "checkbox";
      only.appendChild(box);
      only.appendChild(document.createTextNode(" only the entries a metric counted"));
      d.appendChild(only);
      var ol = el("ol", "steps");
      var results = {};
      steps.forEach(function (s) {
        if (s.k === "tool_result" && s.id) results[s.id] = s;
      });
      steps.forEach(function (s) {
        // A result is shown with its call.
        if (s.k === "tool_result" && s.id && steps.some(function (c) {
          return c.k === "tool_call" && c.id === s.id;
        })) return;
        var item = el("li", "step step-" + s.k);
        if (s.m.length) item.classList.add("counted");
        if (s.k === "tool_call") {
          var r = s.id ? results[s.id] : null;
          var fold = el("details", "call");
          var status = !r ? "no result" : r.x !== null && r.x !== undefined ? "exit " + r.x
            : r.e ? "error" : "ok";
          fold.appendChild(el("summary", null, s.h + " · " + status));
          fold.appendChild(el("pre", "args", s.b));
          if (r) fold.appendChild(el("pre", "output", r.b));
          item.appendChild(fold);
        } else if (s.k === "edit" || s.k === "command" || s.k === "message") {
          var more = el("details", "entry");
          more.appendChild(el("summary", null, s.k + " · " + s.h));
          more.appendChild(el("pre", null, s.b));
          item.appendChild(more);
        } else {
          item.appendChild(el("span", null, s.k + " · " + s.h));
        }
        s.m.forEach(function (m) {
          var mark = el("div", "mark", m.metric + ": " + m.text);
          mark.setAttribute("data-metric", m.metric);
          if (m.feature) mark.setAttribute("data-feature", m.feature);
          item.appendChild(mark);
        });
        ol.appendChild(item);
      });
      box.addEventListener("change", function () {
        Array.prototype.forEach.call(ol.children, function (item) {
          item.hidden = box.checked && !item.classList.contains("counted");
        });
      });
      d.appendChild(ol);
      return d;
    }

    load();
    render();
  }

  function index(columns) {
    var out = {};
    columns.forEach(function (c, i) { out[c] = i; });
    return out;
  }

  function evidence(ev) {
    var d = el("details", "evidence");
    d.appendChild(el("summary", null, "evidence"));
    var dl = el("dl");
    var shown = 0;
    Object.keys(ev).forEach(function (k) {
      var v = ev[k];
      if (v === null || (Array.isArray(v) && v.length === 0)) return;
      dl.appendChild(el("dt", null, k));
      var dd = el("dd");
      dd.appendChild(value(v));
      dl.appendChild(dd);
      shown += 1;
    });
    if (!shown) dl.appendChild(el("dd", null, "nothing recorded"));
    d.appendChild(dl);
    return d;
  }

  function value(v) {
    if (v === null || typeof v !== "object") {
      var text = String(v);
      return el(text.indexOf("\n") >= 0 || text.length > 80 ? "pre" : "span", null, text);
    }
    if (Array.isArray(v)) {
      if (v.every(function (x) { return x === null || typeof x !== "object"; })) {
        return el("span", null, v.join(", "));
      }
      var ul = el("ul");
      v.forEach(function (x) {
        var li = el("li");
        li.appendChild(value(x));
        ul.appendChild(li);
      });
      return ul;
    }
    var box = el("div", "object");
    Object.keys(v).forEach(function (k) {
      var row = el("div");
      row.appendChild(el("span", "key", k + ": "));
      row.appendChild(value(v[k]));
      box.appendChild(row);
    });
    return box;
  }
})();

/*
 * The HTML report's script: reads the embedded results (JSON, or gzip+base64
 * JSON inflated by the browser's DecompressionStream) and draws the page.
 * Text from the results is only ever inserted as text (createTextNode,
 * textContent, setAttribute): never parsed as markup. No request is made.
 */
"use strict";

(function () {
  var PAGE_SIZE = 100;
  var SHOWN_CHANGES = 500;
  var SHOWN_ONLY = 200;
  var RANK = { error: 0, fail: 1, inconclusive: 2, pass: 3 };
  var SVG_NS = document.getElementById("svg-ns").content.firstElementChild.namespaceURI;
  var body = document.body;

  /* An element with attributes (class, data-*, others) and children (text or nodes). */
  function el(tag, attrs) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) {
      add(node, arguments[i]);
    }
    return node;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) {
      return;
    }
    Object.keys(attrs).forEach(function (k) {
      if (attrs[k] !== undefined && attrs[k] !== null) {
        node.setAttribute(k, String(attrs[k]));
      }
    });
  }

  function add(node, child) {
    if (child === undefined || child === null || child === false) {
      return;
    }
    if (Array.isArray(child)) {
      child.forEach(function (c) { add(node, c); });
    } else if (typeof child === "object") {
      node.appendChild(child);
    } else {
      node.appendChild(document.createTextNode(shown(String(child))));
    }
  }

  /* issue37:escape: the terminal rule (eval_datasets::terminal) in the page:
   * controls (C0 but line breaks and tabs, DEL, C1), bidi controls (which
   * would reorder the text around them) and line separators shown escaped. */
  function shown(text) {
    return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g,
      function (c) { return "\\u{" + c.charCodeAt(0).toString(16) + "}"; });
  }

  function fmt(x, digits) {
    return x === undefined || x === null ? "\u2014" : Number(x).toFixed(digits === undefined ? 3 : digits);
  }

  function signed(x, digits) {
    if (x === undefined || x === null) {
      return "\u2014";
    }
    var text = Number(x).toFixed(digits === undefined ? 4 : digits);
    return x > 0 ? "+" + text : text;
  }

  function pct(x) {
    return x === undefined || x === null ? "\u2014" : (x * 100).toFixed(1) + "%";
  }

  function ms(x) {
    if (x === undefined || x === null) {
      return "\u2014";
    }
    return x < 1000 ? x.toFixed(x < 10 ? 1 : 0) + " ms" : (x / 1000).toFixed(2) + " s";
  }

  function usd(x) {
    return x === undefined || x === null ? "\u2014" : "$" + Number(x).toFixed(4);
  }

  function when(unix) {
    if (!unix) {
      return "?";
    }
    return new Date(unix * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC";
  }

  function tokens(u) {
    if (!u) {
      return 0;
    }
    return (u.prompt_tokens || 0) + (u.completion_tokens || 0);
  }

  function tokenText(u) {
    if (!u || (!u.calls && !tokens(u) && !u.cache_hits)) {
      return "\u2014";
    }
    var text = (u.prompt_tokens || 0) + " + " + (u.completion_tokens || 0);
    if (u.calls) {
      text += " (" + u.calls + " call" + (u.calls === 1 ? "" : "s") + ")";
    }
    if (u.cache_hits) {
      text += ", " + u.cache_hits + " cached";
    }
    return text;
  }

  function none(text) {
    return el("span", { class: "none" }, text || "(none)");
  }

  function badge(verdict) {
    return el("span", { class: "badge " + verdict.split(":")[0] }, verdict);
  }

  function showError(message) {
    body.dataset.error = message;
    var p = el("p", { class: "render-error", role: "alert", id: "render-error" },
      "The report could not be shown: " + message);
    body.insertBefore(p, body.firstChild);
  }

  /* The embedded results: plain JSON, or gzip+base64 JSON. */
  function load() {
    var node = document.getElementById("report-data");
    var text = node.textContent;
    if (node.getAttribute("data-encoding") !== "gzip-base64") {
      return Promise.resolve(JSON.parse(text));
    }
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser cannot inflate the embedded data (no DecompressionStream)"));
    }
    var binary = atob(text.trim());
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) {
      bytes[i] = binary.charCodeAt(i);
    }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  /* Everything the page shows, drawn once the data is read. */
  function render(data) {
    if (data.error) {
      throw new Error(data.error);
    }
    /* Each run: its samples, and beside them what they add up to. */
    var runs = (data.runs || []).map(function (r) {
      var run = r.meta || {};
      run.samples = r.samples || [];
      return run;
    });
    var several = runs.length > 1;
    var samples = [];
    runs.forEach(function (run, r) {
      (run.samples || []).forEach(function (s) {
        s._run = r;
        samples.push(s);
      });
    });
    /* Failing first: errors, then failures, then passes (stable otherwise). */
    samples.forEach(function (s, i) { s._order = i; });
    samples.sort(function (a, b) {
      return (RANK[a.verdict] - RANK[b.verdict]) || (a._order - b._order);
    });

    var root = el("main", { id: "report" });
    root.appendChild(header(data, runs));
    root.appendChild(summary(runs, several, !!data.baseline));
    root.appendChild(datasetsSection(runs, several));
    root.appendChild(distributions(runs, several));
    if (data.baseline) {
      root.appendChild(baselineSection(data.baseline));
    }
    root.appendChild(samplesSection(samples, runs));
    body.appendChild(root);
    body.dataset.renderMs = String(Math.round(performance.now()));
    body.dataset.ready = "1";
  }

  function header(data, runs) {
    var node = el("header", null);
    /* The verdict first: one banner per run, above everything else. */
    runs.forEach(function (run) {
      node.appendChild(banner(run, runs.length > 1));
    });
    /* The title the page was written with: the datasets run. */
    node.appendChild(el("h1", null, document.title));
    runs.forEach(function (run) {
      var parts = [run.package ? run.package + " / " + run.binary : run.binary, "written " + when(run.written_unix)];
      parts.push(run.complete ? "complete run" : "incomplete run (" + (run.incomplete || "part of the samples") + ")");
      node.appendChild(el("p", { class: "meta" }, parts.join(" \u00b7 ")));
      if (run.partial) {
        node.appendChild(partialNote(run));
      }
    });
    node.appendChild(el("p", { class: "meta" }, "report generated " + when(data.generated_unix)));
    return node;
  }

  /* A run's verdict and its samples counted, as the terminal summary's
     first line says it: "passed", "FAILED (...)" or "INCOMPLETE (...)". */
  function banner(run, several) {
    var v = run.verdict;
    if (!v) {
      return el("div", { class: "verdict muted", role: "status" }, "no verdict in this results file");
    }
    var state = v.passed ? "pass" : v.complete ? "fail" : "incomplete";
    var counts = [
      [v.passed_samples, "passed", "pass"],
      [v.failed, "failed", "fail"],
      [v.errors, "errors", "error"],
      [v.inconclusive, "inconclusive", "inconclusive"]
    ].map(function (c) {
      return el("span", { class: "count" + (c[0] ? " " + c[2] : "") }, c[0] + " " + c[1]);
    });
    counts.unshift(el("span", { class: "count" }, v.samples + " samples"));
    counts.push(el("span", { class: "count" }, v.complete ? "complete run" : "incomplete run"));
    return el("div", { class: "verdict " + state, id: several ? null : "verdict", role: "status" },
      el("p", { class: "headline" }, (several ? run.binary + ": " : "") + v.headline),
      el("p", { class: "counts" }, counts));
  }

  /* Why a metric did not pass when it gives no reason: its score beside
     the threshold it missed. */
  function shortfall(m) {
    return "score " + fmt(m.score, 3) + " does not meet " + m.op + " " + m.threshold;
  }

  /* A huge run's page holds part of its samples: say which, and link the
     results file (beside the page) that holds them all. The name is made a
     path, never a scheme: "./" and encoded. */
  function partialNote(run) {
    var p = run.partial;
    var note = el("p", { class: "partial" },
      "This page holds " + p.shown + " of the run's " + p.samples + " samples: the first " +
      p.failing_shown + " of the " + p.failing + " that did not pass and " + p.passing_shown +
      " of the " + p.passing + " that passed, evenly spaced. Counts, percentiles and histograms are over every sample; every sample is in ");
    if (run.results_file) {
      note.appendChild(el("a", { href: "./" + encodeURIComponent(run.results_file) }, run.results_file));
    } else {
      note.appendChild(document.createTextNode("the results file"));
    }
    note.appendChild(document.createTextNode("."));
    return note;
  }

  function gateText(g) {
    var stat = g.stat && g.stat !== "mean" ? g.stat + "(" + g.metric + ")" : g.metric;
    var text = stat + " " + g.op + " " + g.threshold + ": ";
    if (!g.judged) {
      var ran = g.ran || [0, 0];
      return text + "not judged (" + ran[0] + " of " + ran[1] + " samples ran)";
    }
    text += g.passed ? "met" : "missed";
    if (g.decision === "inconclusive") {
      text += " (inconclusive)";
    }
    if (g.interval) {
      text += " [95% " + end(g.interval.low) + "\u2013" + end(g.interval.high) + "]";
    }
    if (g.unscored) {
      text += " (" + g.unscored + " unscored)";
    }
    if (g.enforced === false) {
      text += ", not enforced (ciGate is false)";
    }
    return text;
  }

  function end(x) {
    return x === undefined || x === null ? "\u221e" : fmt(x, 3);
  }

  function gateClass(g) {
    return !g.judged || (g.enforced === false && !g.passed) ? "muted" : g.decision === "inconclusive" ? "inconclusive" : g.passed ? "pass" : "fail";
  }

  function metricVerdict(m) {
    if (m.score === undefined || m.score === null) {
      return "error";
    }
    if (m.spread && (m.spread.decision === "inconclusive" || (!m.spread.decision && m.spread.straddles))) {
      return "inconclusive";
    }
    return m.passed ? "pass" : "fail";
  }

  function summary(runs, several, withBaseline) {
    var section = el("section", { id: "summary" }, el("h2", null, "Summary per dataset and metric"));
    var heads = ["dataset", "metric", "scored", "unscored", "mean", "pass rate", "gate", "margin"];
    if (several) {
      heads.unshift("results");
    }
    if (withBaseline) {
      heads.push("\u0394 mean", "\u0394 pass rate");
    }
    var tbody = el("tbody", null);
    runs.forEach(function (run) {
      (run.datasets || []).forEach(function (d) {
        var s = d.summary;
        var metrics = s.metrics || [];
        if (metrics.length === 0) {
          var row = el("tr", { "data-dataset": s.name });
          if (several) {
            row.appendChild(el("td", null, run.binary));
          }
          row.appendChild(el("td", null, s.name));
          row.appendChild(el("td", { colspan: heads.length - (several ? 2 : 1) }, none("no metric: " + s.samples + " sample(s), " + s.errors + " error(s)")));
          tbody.appendChild(row);
        }
        metrics.forEach(function (m) {
          var gates = (m.gate ? [m.gate] : []).concat(m.more_gates || []);
          var row = el("tr", { "data-dataset": s.name, "data-metric": m.name });
          if (several) {
            row.appendChild(el("td", null, run.binary));
          }
          row.appendChild(el("td", null, s.name));
          row.appendChild(el("td", null, [m.name].concat(calibrationNotes(run, s.name, m.name))));
          row.appendChild(el("td", { class: "num" }, m.scored));
          row.appendChild(el("td", { class: "num" + (m.unscored ? " error" : "") }, m.unscored || 0));
          row.appendChild(el("td", { class: "num" }, fmt(m.mean, 4)));
          row.appendChild(el("td", { class: "num" }, pct(m.pass_rate)));
          row.appendChild(el("td", { class: "gate" }, gates.length === 0 ? none("no gate") : gates.map(function (g, i) {
            return [i ? el("br", null) : null, el("span", { class: gateClass(g) }, gateText(g))];
          })));
          row.appendChild(el("td", { class: "num" }, gates.length === 0 ? "" : gates.map(function (g, i) {
            return [i ? el("br", null) : null, el("span", { class: gateClass(g) }, signed(g.margin))];
          })));
          if (withBaseline) {
            var delta = (d.deltas || {})[m.name];
            row.appendChild(deltaCell(delta, "mean", m.op, d.new_dataset));
            row.appendChild(deltaCell(delta, "pass_rate", ">=", d.new_dataset));
          }
          tbody.appendChild(row);
        });
      });
    });
    var table = el("table", { id: "summary-table" },
      el("thead", null, el("tr", null, heads.map(function (h) { return el("th", null, h); }))), tbody);
    section.appendChild(table);
    return section;
  }

  /* A judged metric's agreement with human labels: each calibration the run
     attached to this dataset's metric (the same metric, operator, threshold
     and options, scored by the same judge), with its label set. Files of
     earlier versions name no dataset: their calibrations were attached by
     the judge alone, and are not shown. */
  function calibrationNotes(run, dataset, metric) {
    var cals = (run.provenance && run.provenance.calibrations) || [];
    return cals.filter(function (x) {
      return x.metric === metric && (x.datasets || []).indexOf(dataset) >= 0;
    }).map(function (c) {
      var k = c.kappa === undefined || c.kappa === null ? "undefined" : fmt(c.kappa, 2);
      var ci = c.kappa_interval ? " (95% " + fmt(c.kappa_interval.low, 2) + "\u2013" + fmt(c.kappa_interval.high, 2) + ")" : "";
      var hash = c.labels_sha256 ? ", sha256 " + c.labels_sha256.slice(0, 12) : "";
      return el("span", {
        class: "calibration",
        title: c.spec + " against " + c.samples + " human labels (" + c.labels + hash + "): accuracy " + pct(c.accuracy) + ", calibrated " + when(c.written_unix)
      }, " \u03ba " + k + ci + " vs humans");
    });
  }

  function deltaCell(delta, key, op, newDataset) {
    if (newDataset || !delta || delta.new_metric) {
      return el("td", { class: "delta num" }, "new");
    }
    var value = delta[key];
    if (value === undefined || value === null) {
      return el("td", { class: "delta num" }, "\u2014");
    }
    var better = op === "<=" && key === "mean" ? value < 0 : value > 0;
    var cls = "delta num" + (value === 0 ? "" : better ? " better" : " worse");
    var old = delta["old_" + key];
    return el("td", { class: cls, title: "was " + (key === "mean" ? fmt(old, 4) : pct(old)) },
      key === "mean" ? signed(value) : signed(value * 100, 1) + " pt");
  }

  function datasetsSection(runs, several) {
    var section = el("section", { id: "datasets" }, el("h2", null, "Per dataset: latency, tokens, cost"));
    var heads = ["dataset", "samples", "passed", "failed", "errors", "inconclusive", "by tag (category)", "latency p50", "latency p95", "ttft p50", "ttft p95",
      "agent tokens", "judge tokens", "embedding tokens", "cost"];
    if (several) {
      heads.unshift("results");
    }
    var tbody = el("tbody", null);
    runs.forEach(function (run) {
      (run.datasets || []).forEach(function (d) {
        var s = d.summary;
        var u = s.usage || {};
        var lat = d.latency_ms || [];
        var ttft = d.ttft_ms || [];
        var row = el("tr", { "data-dataset": s.name });
        if (several) {
          row.appendChild(el("td", null, run.binary));
        }
        var planned = s.planned !== undefined && s.planned !== null && s.planned !== s.samples ? " of " + s.planned : "";
        row.appendChild(el("td", null, s.description ? [s.name, el("div", { class: "note description" }, s.description)] : s.name));
        row.appendChild(el("td", { class: "num" }, s.samples + planned));
        row.appendChild(el("td", { class: "num pass" }, s.passed));
        row.appendChild(el("td", { class: "num" + (s.failed ? " fail" : "") }, s.failed));
        row.appendChild(el("td", { class: "num" + (s.errors ? " error" : "") }, s.errors));
        row.appendChild(el("td", { class: "num" + (s.inconclusive ? " inconclusive" : "") }, s.inconclusive || 0));
        row.appendChild(el("td", { class: "tags" }, (d.tags || []).map(function (t) {
          return t.tag + " " + t.passed + "/" + t.samples;
        }).join(", ")));
        row.appendChild(el("td", { class: "num" }, ms(lat[0])));
        row.appendChild(el("td", { class: "num" }, ms(lat[1])));
        row.appendChild(el("td", { class: "num" }, ms(ttft[0])));
        row.appendChild(el("td", { class: "num" }, ms(ttft[1])));
        row.appendChild(el("td", { class: "num" }, tokenText(u.agent)));
        row.appendChild(el("td", { class: "num" }, tokenText(u.judge)));
        row.appendChild(el("td", { class: "num" }, tokenText(u.embeddings)));
        var cost = usd(u.cost_usd);
        if (u.cost_unknown) {
          cost += " (+ unknown for " + u.cost_unknown + ")";
        }
        row.appendChild(el("td", { class: "num" }, cost));
        tbody.appendChild(row);
      });
    });
    section.appendChild(el("table", { id: "datasets-table" },
      el("thead", null, el("tr", null, heads.map(function (h) { return el("th", null, h); }))), tbody));
    section.appendChild(el("p", { class: "note" },
      "Latency and ttft per run of the agent; percentiles by linear interpolation (Hyndman & Fan 7). Tokens: prompt + completion."));
    return section;
  }

  function distributions(runs, several) {
    var section = el("section", { id: "distributions" }, el("h2", null, "Score distributions"));
    var charts = el("div", { class: "charts" });
    runs.forEach(function (run) {
      (run.datasets || []).forEach(function (d) {
        Object.keys(d.histograms || {}).forEach(function (metric) {
          var h = d.histograms[metric];
          var caption = (several ? run.binary + " \u00b7 " : "") + d.summary.name + " \u00b7 " + metric +
            " (threshold " + h.op + " " + h.threshold + ")";
          charts.appendChild(el("figure", { class: "chart" }, el("figcaption", null, caption), histogram(h, d.summary.name, metric)));
        });
      });
    });
    if (!charts.firstChild) {
      charts.appendChild(none("no scores"));
    }
    section.appendChild(charts);
    return section;
  }

  function histogram(h, dataset, metric) {
    var max = Math.max.apply(null, h.counts.concat([1]));
    // Room on the left for the largest count's label (about 7 px a digit).
    var W = 300, H = 120, left = Math.max(30, 10 + 7 * String(max).length), bottom = 18, top = 6, right = 8;
    var plotW = W - left - right, plotH = H - top - bottom;
    var node = svg("svg", { class: "dist", width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img",
      "data-dataset": dataset, "data-metric": metric });
    var title = svg("title", null);
    title.textContent = dataset + " \u00b7 " + metric + ": " + h.counts.join(", ");
    node.appendChild(title);
    var n = h.counts.length;
    var bw = plotW / n;
    var x = function (v) { return left + (v - h.lo) / (h.hi - h.lo) * plotW; };
    h.counts.forEach(function (c, i) {
      var bh = c / max * plotH;
      var bar = svg("rect", { class: "bar", x: (left + i * bw + 0.5).toFixed(1), y: (top + plotH - bh).toFixed(1),
        width: Math.max(bw - 1, 0.5).toFixed(1), height: bh.toFixed(1) });
      var tip = svg("title", null);
      var from = h.lo + (h.hi - h.lo) * i / n, to = h.lo + (h.hi - h.lo) * (i + 1) / n;
      tip.textContent = c + " sample(s) in [" + from.toPrecision(3) + ", " + to.toPrecision(3) + (i === n - 1 ? "]" : ")");
      bar.appendChild(tip);
      node.appendChild(bar);
    });
    node.appendChild(svg("line", { class: "axis", x1: left, x2: W - right, y1: top + plotH, y2: top + plotH }));
    var label = function (text, lx, ly, anchor) {
      var t = svg("text", { x: lx, y: ly, "text-anchor": anchor });
      t.textContent = text;
      node.appendChild(t);
    };
    label(String(max), left - 4, top + 8, "end");
    label("0", left - 4, top + plotH, "end");
    label(String(Number(h.lo.toPrecision(3))), left, H - 4, "start");
    label(String(Number(h.hi.toPrecision(3))), W - right, H - 4, "end");
    var tx = Math.min(Math.max(x(h.threshold), left), W - right);
    var mark = svg("line", { class: "threshold", x1: tx.toFixed(1), x2: tx.toFixed(1), y1: top - 2, y2: top + plotH + 3,
      "data-threshold": h.threshold });
    var markTip = svg("title", null);
    markTip.textContent = "threshold " + h.op + " " + h.threshold;
    mark.appendChild(markTip);
    node.appendChild(mark);
    return node;
  }

  function baselineSection(b) {
    var section = el("section", { id: "baseline" }, el("h2", null, "Against the baseline"));
    var changes = b.changes || [];
    var worse = changes.filter(function (c) { return !c.better; }).length;
    var better = changes.length - worse;
    section.appendChild(el("p", { class: "meta" }, "baseline " + b.binary + ", written " + when(b.written_unix)));
    section.appendChild(el("p", { id: "baseline-counts" },
      b.compared + " sample(s) compared: ",
      el("span", { class: worse ? "fail" : "" }, worse + " worse"), ", ",
      el("span", { class: better ? "pass" : "" }, better + " better"), ", ",
      (b.added || []).length + " new, " + (b.removed || []).length + " removed"));
    (b.caveats || []).forEach(function (c) {
      section.appendChild(el("p", { class: "note caveat" }, c));
    });
    var comparisons = b.comparisons || [];
    if (comparisons.length) {
      var verdictClass = { "regression": "fail", "improvement": "pass", "no-change": "", "inconclusive": "inconclusive", "options-changed": "" };
      section.appendChild(el("h4", null, "Per dataset and metric (paired; the verdict)"));
      section.appendChild(el("table", { id: "comparisons" },
        el("thead", null, el("tr", null, ["dataset", "metric", "pairs", "before", "now", "\u0394", "95% interval", "p (Holm)", "verdict"].map(function (h) {
          return el("th", null, h);
        }))),
        el("tbody", null, comparisons.map(function (c) {
          var needed = c.needed && c.needed.samples ? " (about " + c.needed.samples + " samples would decide it)" : "";
          var word = c.outcome.replace("-", " ") + (c.lost ? ": " + c.lost + " no longer scored" : "") + needed;
          return el("tr", { "data-dataset": c.dataset, "data-metric": c.metric, "data-outcome": c.outcome },
            el("td", null, c.dataset),
            el("td", null, c.metric),
            el("td", { class: "num" }, c.pairs),
            el("td", { class: "num" }, fmt(c.old_mean, 4)),
            el("td", { class: "num" }, fmt(c.new_mean, 4)),
            el("td", { class: "num" }, signed(c.difference)),
            el("td", { class: "num" }, c.interval ? signed(c.interval.low) + "\u2026" + signed(c.interval.high) : "\u2014"),
            el("td", { class: "num" }, c.adjusted_p === null || c.adjusted_p === undefined ? "\u2014" : fmt(c.adjusted_p, 4)),
            el("td", { class: verdictClass[c.outcome] || "" }, word));
        }))));
    }
    var gateClass = { "regression": "fail", "improvement": "pass", "inconclusive": "inconclusive", "threshold-changed": "", "options-changed": "" };
    (b.gates || []).filter(function (g) { return g.outcome !== "no-change"; }).forEach(function (g) {
      section.appendChild(el("p", { class: gateClass[g.outcome] || "" },
        "gate " + g.dataset + " " + (g.was ? g.was + " \u2192 " : "") + g.gate + ": " + (g.was_met ? "met" : "missed") + " \u2192 " + (g.met ? "met" : "missed") + " (" + g.outcome.replace("-", " ") + ")"));
    });
    if (changes.length) {
      section.appendChild(el("h4", null, "Samples that moved (evidence)"));
      var tbody = el("tbody", null);
      var shown = 0;
      var more = el("button", { class: "more", type: "button" });
      var showMore = function () {
        var upto = Math.min(changes.length, shown + SHOWN_CHANGES);
        for (; shown < upto; shown++) {
          var c = changes[shown];
          tbody.appendChild(el("tr", { class: "delta " + (c.better ? "better" : "worse"), "data-id": c.id, "data-dataset": c.dataset },
            el("td", null, c.better ? "better" : "worse"),
            el("td", null, c.dataset),
            el("td", null, c.id),
            el("td", { class: "name" }, c.test_name),
            el("td", null, c.metric),
            el("td", { class: "num" }, c.old === null || c.old === undefined ? "unscored" : fmt(c.old)),
            el("td", { class: "num" }, c.new === null || c.new === undefined ? "unscored" : fmt(c.new)),
            el("td", { class: "num d" }, signed(c.delta))));
        }
        more.textContent = "show " + Math.min(SHOWN_CHANGES, changes.length - shown) + " more of " + (changes.length - shown);
        more.hidden = shown >= changes.length;
      };
      more.addEventListener("click", showMore);
      showMore();
      section.appendChild(el("table", { id: "changes" },
        el("thead", null, el("tr", null, ["", "dataset", "id", "test", "metric", "before", "now", "\u0394"].map(function (h) {
          return el("th", null, h);
        }))), tbody));
      section.appendChild(more);
    } else {
      section.appendChild(el("p", null, none("no score moved")));
    }
    [["New samples (not in the baseline)", b.added || [], "added"], ["Removed samples (only in the baseline)", b.removed || [], "removed"]].forEach(function (part) {
      if (!part[1].length) {
        return;
      }
      var list = el("ul", { class: part[2] });
      part[1].slice(0, SHOWN_ONLY).forEach(function (o) {
        list.appendChild(el("li", null, o.dataset + " \u00b7 " + o.id + " (" + o.test_name + ")"));
      });
      section.appendChild(el("h4", null, part[0]));
      section.appendChild(list);
      if (part[1].length > SHOWN_ONLY) {
        section.appendChild(el("p", { class: "note" }, "and " + (part[1].length - SHOWN_ONLY) + " more"));
      }
    });
    return section;
  }

  function unique(values) {
    var seen = {};
    var out = [];
    values.forEach(function (v) {
      if (!Object.prototype.hasOwnProperty.call(seen, v)) {
        seen[v] = true;
        out.push(v);
      }
    });
    return out.sort();
  }

  function select(id, label, options) {
    var node = el("select", { id: id });
    options.forEach(function (o) {
      node.appendChild(el("option", { value: o[0] }, o[1]));
    });
    return [node, el("label", { for: id }, label, node)];
  }

  function samplesSection(samples, runs) {
    var section = el("section", { id: "samples-section" }, el("h2", null, "Samples"));
    var datasets = unique(samples.map(function (s) { return s.dataset; }));
    var tags = unique([].concat.apply([], samples.map(function (s) { return s.tags || []; })));
    var metrics = unique([].concat.apply([], samples.map(function (s) {
      return (s.metrics || []).map(function (m) { return m.name; });
    })));
    var fDataset = select("f-dataset", "dataset", [["", "all"]].concat(datasets.map(function (d) { return [d, d]; })));
    var fVerdict = select("f-verdict", "verdict", [["", "all"], ["pass", "pass"], ["fail", "fail"], ["inconclusive", "inconclusive"], ["error", "error"]]);
    var fTag = select("f-tag", "tag", [["", "all"]].concat(tags.map(function (t) { return [t, t]; })));
    var fMetric = select("f-metric", "metric not passed", [["", "any"]].concat(metrics.map(function (m) { return [m, m]; })));
    var search = el("input", { id: "search", type: "search", placeholder: "search id, name, input, expected, output", "aria-label": "search" });
    section.appendChild(el("div", { class: "filters" }, fDataset[1], fVerdict[1], fTag[1], fMetric[1], search));
    var count = el("p", { id: "count" });
    section.appendChild(count);
    var heads = ["verdict", "dataset", "sample", "metrics", "latency", "expected", "output"];
    var tbody = el("tbody", null);
    var table = el("table", { id: "samples" },
      el("thead", null, el("tr", null, heads.map(function (h) { return el("th", null, h); }))), tbody);
    var prev = el("button", { id: "prev", type: "button" }, "\u2190 previous");
    var next = el("button", { id: "next", type: "button" }, "next \u2192");
    var pageText = el("span", { id: "page" });
    var pager = el("div", { class: "pager" }, prev, pageText, next);
    section.appendChild(pager);
    section.appendChild(table);

    var haystacks = null;
    var matching = samples;
    var page = 0;

    function haystack(s) {
      return [s.id, s.test_name, s.name, (s.input || []).join("\n"), s.expected, s.output]
        .filter(function (v) { return v !== undefined && v !== null; }).join("\n").toLowerCase();
    }

    var applied = null;

    function filter() {
      var d = fDataset[0].value, v = fVerdict[0].value, t = fTag[0].value, m = fMetric[0].value;
      var q = search.value.trim().toLowerCase();
      // `change` also fires when the search box loses focus: the table is
      // then left alone, or the row being clicked would be replaced between
      // mousedown and mouseup and the click lost.
      var key = [d, v, t, m, q].join("\u0000");
      if (key === applied) {
        return;
      }
      applied = key;
      if (q && !haystacks) {
        haystacks = samples.map(haystack);
      }
      matching = [];
      for (var i = 0; i < samples.length; i++) {
        var s = samples[i];
        if ((d && s.dataset !== d) || (v && s.verdict !== v)) {
          continue;
        }
        if (t && (s.tags || []).indexOf(t) < 0) {
          continue;
        }
        if (m && !(s.metrics || []).some(function (x) { return x.name === m && !x.passed; })) {
          continue;
        }
        if (q && haystacks[i].indexOf(q) < 0) {
          continue;
        }
        matching.push(s);
      }
      page = 0;
      draw();
    }

    function draw() {
      var pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
      page = Math.min(Math.max(page, 0), pages - 1);
      count.textContent = matching.length + " of " + samples.length + " samples";
      pageText.textContent = "page " + (page + 1) + " of " + pages;
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
      var rows = document.createDocumentFragment();
      matching.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE).forEach(function (s) {
        rows.appendChild(sampleRow(s, heads.length));
      });
      tbody.textContent = "";
      tbody.appendChild(rows);
    }

    [fDataset[0], fVerdict[0], fTag[0], fMetric[0], search].forEach(function (control) {
      control.addEventListener("input", filter);
      control.addEventListener("change", filter);
    });
    prev.addEventListener("click", function () { page -= 1; draw(); });
    next.addEventListener("click", function () { page += 1; draw(); });
    filter();
    return section;
  }

  function sampleRow(s, columns) {
    var metrics = (s.metrics || []).map(function (m) {
      var cls = metricVerdict(m);
      return el("span", { class: "metric-chip " + cls }, m.name + " " + (m.score === undefined || m.score === null ? "error" : fmt(m.score)));
    });
    var output = s.output !== undefined && s.output !== null ? s.output : s.error || "";
    var expected = s.expected || "";
    var row = el("tr", { class: "sample v-" + s.verdict, tabindex: "0", "data-id": s.id, "data-verdict": s.verdict, "data-dataset": s.dataset },
      el("td", null, badge(s.verdict)),
      el("td", null, s.dataset),
      el("td", { class: "name" }, s.test_name || s.id),
      el("td", null, metrics.length ? metrics : none("no metric")),
      el("td", { class: "num" }, ms(s.latency_ms)),
      el("td", { class: "out expected", title: expected.slice(0, 300) }, expected ? expected.slice(0, 160) : none()),
      el("td", { class: "out", title: output.slice(0, 300) }, output.slice(0, 160)));
    var toggle = function () {
      var after = row.nextSibling;
      if (after && after.classList && after.classList.contains("detail")) {
        after.parentNode.removeChild(after);
        row.classList.remove("open");
      } else {
        row.parentNode.insertBefore(detail(s, columns), row.nextSibling);
        row.classList.add("open");
      }
    };
    row.addEventListener("click", toggle);
    row.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        toggle();
      }
    });
    return row;
  }

  function block(cls, title, content, wide) {
    return el("div", { class: cls + (wide ? " wide" : "") }, el("h4", null, title), content);
  }

  function pre(text) {
    return text === undefined || text === null || text === "" ? none() : el("pre", null, text);
  }

  function call(c) {
    var args = c.arguments && Object.keys(c.arguments).length ? JSON.stringify(c.arguments) : "";
    return el("li", null, el("code", null, c.name + "(" + args + ")"), c.turn ? " (turn " + (c.turn + 1) + ")" : "");
  }

  function ids(list, other) {
    var node = el("div", { class: "ids" });
    list.forEach(function (id) {
      node.appendChild(el("span", { class: other.indexOf(id) >= 0 ? "hit" : "" }, id));
    });
    return node;
  }

  // A trajectory as a timeline: one row per step, its bar placed by when it
  // started and sized by how long it took (steps from an answer have no
  // timing: no bar).
  function timeline(t) {
    var steps = t.steps || [];
    var end = 0;
    steps.forEach(function (st) {
      end = Math.max(end, (st.start_ms || 0) + (st.duration_ms || 0));
    });
    var rows = steps.map(function (st) {
      var label = st.name.indexOf(st.kind) === 0 ? st.name : st.kind + " " + st.name;
      if (st.kind === "tool") {
        var args = st.arguments && Object.keys(st.arguments).length ? JSON.stringify(st.arguments) : "";
        label = "tool " + st.name + "(" + args + ")";
      }
      var facts = [];
      if (st.duration_ms !== undefined && st.duration_ms !== null) {
        facts.push(ms(st.duration_ms));
      }
      if (st.input_tokens !== undefined || st.output_tokens !== undefined) {
        facts.push((st.input_tokens || 0) + " in / " + (st.output_tokens || 0) + " out tokens");
      }
      var bar = el("div", { class: "t-track" });
      if (end > 0 && st.duration_ms !== undefined && st.duration_ms !== null) {
        var left = 100 * (st.start_ms || 0) / end;
        var width = Math.max(0.5, 100 * st.duration_ms / end);
        bar.appendChild(el("span", { class: "t-bar k-" + st.kind, style: "left:" + left.toFixed(2) + "%;width:" + Math.min(width, 100 - left).toFixed(2) + "%" }));
      }
      var row = el("li", { class: "step k-" + st.kind + (st.error ? " failed" : ""), "data-kind": st.kind, "data-name": st.name },
        el("span", { class: "t-turn" }, "turn " + ((st.turn || 0) + 1)),
        el("code", { class: "t-label" }, label),
        bar,
        el("span", { class: "t-facts" }, facts.join(", ")));
      if (st.result) {
        row.appendChild(el("div", { class: "t-result" }, "\u2192 " + st.result.slice(0, 300)));
      }
      if (st.error) {
        row.appendChild(el("div", { class: "error" }, st.error));
      }
      return row;
    });
    var parts = [el("p", null, steps.length + " steps" + (t.source === "answer" ? " (from the answer's tool calls)" : " (from the agent's spans)") + (end > 0 ? ", " + ms(end) : ""))];
    if (rows.length) {
      parts.push(el("ol", { class: "timeline" }, rows));
    }
    if (t.note) {
      parts.push(el("p", { class: "error" }, t.note));
    }
    if ((t.traces || []).length) {
      parts.push(el("p", { class: "traces" }, "traces: " + t.traces.join(", ")));
    }
    return parts;
  }

  function detail(s, columns) {
    var input = s.input || [];
    var inputContent = input.length > 1
      ? el("ol", { class: "turns" }, input.map(function (t) { return el("li", null, el("pre", null, t)); }))
      : pre(input[0]);
    var context = [];
    if ((s.context || []).length) {
      context.push(el("ol", { class: "chunks" }, s.context.map(function (c) { return el("li", null, el("pre", null, c)); })));
    }
    var retrieved = s.retrieved_ids || [], relevant = s.relevant_ids || [];
    if (retrieved.length) {
      context.push(el("p", null, "retrieved (best first; relevant marked):"), ids(retrieved, relevant));
    }
    if (relevant.length) {
      context.push(el("p", null, "relevant:"), ids(relevant, retrieved));
    }
    var tools = [];
    if (s.expected_tools) {
      tools.push(el("p", null, "expected:"), s.expected_tools.length ? el("ul", { class: "calls" }, s.expected_tools.map(call)) : none("no tool call"));
    }
    if ((s.tool_calls || []).length) {
      tools.push(el("p", null, "made:"), el("ul", { class: "calls" }, s.tool_calls.map(call)));
    }
    var metricRows = (s.metrics || []).map(function (m) {
      var verdict = metricVerdict(m);
      if (verdict === "inconclusive") {
        verdict = m.passed ? "inconclusive: counted pass" : "inconclusive: counted fail";
      }
      var why = [m.error ? el("span", { class: "error" }, m.error) : null, m.reason ? el("span", { class: "reason" }, (m.error ? " " : "") + m.reason) : null];
      if (!m.passed && !m.error && !m.reason) {
        why = [el("span", { class: "reason" }, shortfall(m))];
      }
      var score = fmt(m.score, 4);
      if (m.spread) {
        var level = m.spread.level ? Math.round(m.spread.level * 1000) / 10 : 95;
        score += " (" + level + "% " + fmt(m.spread.low, 3) + "\u2013" + fmt(m.spread.high, 3) + ", " + m.spread.runs + " runs)";
      }
      return el("tr", { "data-metric": m.name },
        el("td", null, m.name + (m.method ? " (" + m.method + ")" : "")),
        el("td", { class: "num" }, score),
        el("td", null, m.op),
        el("td", { class: "num" }, m.threshold),
        el("td", null, badge(verdict)),
        el("td", null, why));
    });
    var metricsTable = el("table", { class: "d-metrics" },
      el("thead", null, el("tr", null, ["metric", "score", "op", "threshold", "verdict", "reason / error"].map(function (h) {
        return el("th", null, h);
      }))),
      el("tbody", null, metricRows));
    var meta = el("dl", { class: "kv" });
    var kv = function (k, v) {
      if (v === undefined || v === null || v === "" || (Array.isArray(v) && !v.length)) {
        return;
      }
      meta.appendChild(el("dt", null, k));
      meta.appendChild(el("dd", null, v));
    };
    kv("error", s.error ? el("span", { class: "error" }, s.error) : null);
    kv("id", s.id);
    kv("test name", s.test_name);
    kv("name", s.name);
    kv("notes", s.notes);
    kv("dataset", s.dataset);
    kv("dataset id", s.dataset_id);
    kv("source", s.source);
    kv("latency", ms(s.latency_ms) + (s.runs > 1 ? " (" + s.runs + " runs)" : ""));
    kv("ttft", s.ttft_ms === undefined ? null : ms(s.ttft_ms));
    kv("agent tokens", s.agent ? tokenText(s.agent) : null);
    kv("judge tokens", s.usage ? tokenText(s.usage) : null);
    kv("embedding tokens", s.embeddings ? tokenText(s.embeddings) : null);
    kv("cost", s.cost_usd === undefined ? (s.cost_unknown ? "unknown: " + s.cost_unknown : null) : usd(s.cost_usd));
    kv("tags", (s.tags || []).join(", "));
    if (s.metadata && Object.keys(s.metadata).length) {
      kv("metadata", el("pre", null, JSON.stringify(s.metadata, null, 2)));
    }
    var grid = el("div", { class: "detail-grid" },
      block("d-input", input.length > 1 ? "Conversation (" + input.length + " turns)" : "Input", inputContent),
      block("d-expected", "Expected", pre(s.expected)),
      block("d-output", "Output", pre(s.output)),
      block("d-context", "Context and retrieval", context.length ? context : none()),
      block("d-tools", "Tool calls", tools.length ? tools : none()),
      s.trajectory ? block("d-trajectory", "Trajectory", timeline(s.trajectory), true) : null,
      block("d-metrics-block", "Metrics", (s.metrics || []).length ? metricsTable : [none("no metric ran"), metricsTable], true),
      block("d-meta", "Measured and described", meta, true));
    return el("tr", { class: "detail", "data-id": s.id }, el("td", { colspan: columns }, grid));
  }

  load().then(render).catch(function (e) {
    showError(e && e.message ? e.message : String(e));
  });
}());

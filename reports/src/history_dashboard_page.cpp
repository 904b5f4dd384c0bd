#include "history_dashboard_page.h"

#include "tipbench/common/escape.h"

namespace tipbench::reports {

namespace {

// Filters offer only the values that exist among the series the other filters leave; a series'
// data file is loaded by a <script> tag when it is shown (file:// pages cannot fetch()). When the
// shown charts have drawn, <body> carries data-charts-expected, data-charts-drawn (canvases with
// painted pixels), data-js-errors and data-ready="1": the headless-browser test reads them.
constexpr const char* kScript = R"js(
(function () {
  'use strict';
  var errors = 0;
  function noteError() { errors += 1; document.body.dataset.jsErrors = String(errors); }
  window.addEventListener('error', noteError);
  document.body.dataset.jsErrors = '0';
  var MAX_SHOWN = 24;
  var index = window.TIPBENCH_INDEX || { series: [] };
  var dims = [['hardware', 'GPU / CPU'], ['suite', 'suite'], ['model', 'model'], ['stack', 'stack'], ['metric', 'metric']];
  var chosen = {};
  var charts = [];
  var waiting = {};

  function matches(s, except) {
    return dims.every(function (d) {
      var k = d[0];
      if (k === except || !chosen[k]) return true;
      return k === 'stack' ? s.stacks.indexOf(chosen[k]) >= 0 : s[k] === chosen[k];
    });
  }
  function values(k) {
    var seen = {};
    index.series.forEach(function (s) {
      if (!matches(s, k)) return;
      (k === 'stack' ? s.stacks : [s[k]]).forEach(function (v) { seen[v] = true; });
    });
    return Object.keys(seen).sort();
  }
  function buildFilters() {
    var host = document.getElementById('filters');
    host.textContent = '';
    dims.forEach(function (d) {
      var label = document.createElement('label');
      label.textContent = d[1] + ' ';
      var select = document.createElement('select');
      select.dataset.dim = d[0];
      var all = document.createElement('option');
      all.value = '';
      all.textContent = 'all';
      select.appendChild(all);
      values(d[0]).forEach(function (v) {
        var o = document.createElement('option');
        o.value = v;
        o.textContent = v;
        if (chosen[d[0]] === v) o.selected = true;
        select.appendChild(o);
      });
      select.addEventListener('change', function () {
        chosen[d[0]] = select.value;
        buildFilters();
        show();
      });
      label.appendChild(select);
      host.appendChild(label);
    });
  }

  window.tipbenchSeriesLoaded = function (id, data) {
    var done = waiting[id];
    delete waiting[id];
    if (done) done(data);
  };
  function load(id, done) {
    waiting[id] = done;
    var tag = document.createElement('script');
    tag.src = 'series/' + id + '.js';
    tag.onerror = function () { noteError(); done(null); };
    document.head.appendChild(tag);
  }
  function painted(canvas) {
    var pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (var i = 3; i < pixels.length; i += 4) { if (pixels[i] !== 0) return true; }
    return false;
  }
  function draw(canvas, d) {
    var labels = d.points.map(function (p) { return p.time.slice(0, 10); });
    var byRun = {};
    d.points.forEach(function (p, i) { byRun[p.run] = i; });
    var marks = d.points.map(function () { return null; });
    var markInfo = {};
    d.changes.forEach(function (c) {
      var i = byRun[c.after_run];
      if (i === undefined) return;
      marks[i] = d.points[i].value;
      markInfo[i] = c;
    });
    var left = function (p) { return p.loaded || p.excluded; };
    var clean = d.points.map(function (p) { return left(p) ? null : p.value; });
    var loaded = d.points.map(function (p) { return p.loaded && !p.excluded ? p.value : null; });
    var excluded = d.points.map(function (p) { return p.excluded ? p.value : null; });
    var annotated = d.points.map(function (p) { return p.annotated ? p.value : null; });
    var markColor = marks.map(function (m, i) {
      var c = markInfo[i];
      if (!c) return 'rgb(220,53,69)';
      return c.verdict === 'expected' ? 'rgb(13,110,253)' : c.verdict === 'improvement' ? 'rgb(25,135,84)' : 'rgb(220,53,69)';
    });
    var range = d.points.map(function (p) { return [p.low, p.high]; });
    return new Chart(canvas.getContext('2d'), {
      data: {
        labels: labels,
        datasets: [
          { type: 'bar', label: 'blocks (min to max)', data: range, backgroundColor: 'rgba(54,162,235,0.18)',
            barPercentage: 0.4, order: 3 },
          { type: 'line', label: 'run median', data: clean, borderColor: 'rgb(54,162,235)', spanGaps: true,
            pointRadius: 2, order: 2 },
          { type: 'line', label: 'measured under load (left out)', data: loaded, showLine: false,
            pointStyle: 'crossRot', pointRadius: 6, borderColor: 'rgb(140,140,140)', order: 1 },
          { type: 'line', label: 'excluded (annotation)', data: excluded, showLine: false,
            pointStyle: 'rectRot', pointRadius: 6, borderColor: 'rgb(111,66,193)', backgroundColor: 'rgba(0,0,0,0)',
            order: 1 },
          { type: 'line', label: 'expected change (annotation)', data: annotated, showLine: false,
            pointStyle: 'star', pointRadius: 10, borderColor: 'rgb(13,110,253)', order: 0 },
          { type: 'line', label: 'change point', data: marks, showLine: false, pointStyle: 'triangle',
            pointRadius: 9, backgroundColor: markColor, borderColor: markColor, order: 0 }
        ]
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { tooltip: { callbacks: { afterBody: function (items) {
          var i = items[0].dataIndex, p = d.points[i], lines = ['run ' + p.run + ', git ' + (p.git || '-'), p.stack];
          var c = markInfo[i];
          if (c) {
            lines.push(c.verdict + ': x' + c.ratio.toFixed(3) + ' [' + c.ratio_low.toFixed(3) + ', ' +
                       c.ratio_high.toFixed(3) + '], p=' + c.p_value.toPrecision(2));
            if (c.software_change) lines.push('software changed: ' + c.software_change);
            if (c.note) lines.push('annotated: ' + c.note);
          }
          if (p.excluded) lines.push('excluded: ' + p.excluded);
          if (p.annotated) lines.push('expected change: ' + p.annotated);
          return lines;
        } } } },
        scales: { x: { ticks: { maxTicksLimit: 12, maxRotation: 0 } },
                  y: { beginAtZero: false, grace: '5%', title: { display: true, text: d.metric } } }
      }
    });
  }
  function show() {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    var host = document.getElementById('charts');
    host.textContent = '';
    var list = index.series.filter(function (s) { return matches(s, null); });
    list.sort(function (a, b) { return b.regressions - a.regressions || b.changes - a.changes; });
    var shown = list.slice(0, MAX_SHOWN);
    document.getElementById('shown').textContent = shown.length + ' of ' + list.length +
        ' matching series shown (of ' + index.series.length + '; series with regressions first)';
    var expected = shown.length, done = 0, drawn = 0;
    document.body.dataset.chartsExpected = String(expected);
    document.body.dataset.chartsDrawn = '0';
    document.body.dataset.ready = expected === 0 ? '1' : '0';
    shown.forEach(function (s) {
      var box = document.createElement('div');
      box.className = 'chart' + (s.regressions ? ' regressed' : '');
      var title = document.createElement('h3');
      title.textContent = s.cell + ' ' + s.metric + ' on ' + s.hardware + ' (' + s.model + '): ' + s.runs +
          ' runs, ' + s.changes + ' change point(s)';
      var holder = document.createElement('div');
      holder.className = 'holder';
      var canvas = document.createElement('canvas');
      holder.appendChild(canvas);
      box.appendChild(title);
      box.appendChild(holder);
      host.appendChild(box);
      load(s.id, function (data) {
        if (data) {
          try {
            charts.push(draw(canvas, data));
            if (painted(canvas)) drawn += 1;
          } catch (e) { noteError(); }
        }
        done += 1;
        if (done === expected) {
          document.body.dataset.chartsDrawn = String(drawn);
          document.body.dataset.ready = '1';
        }
      });
    });
  }

  try {
    if (typeof Chart === 'undefined') throw new Error('Chart.js did not load (chart.min.js beside this page)');
    document.getElementById('summary').textContent = index.series.length + ' series; ' + index.new_regressions +
        ' new regression(s); change points by E-divisive means with a t-test, window ' + index.window +
        ', p <= ' + index.max_p_value;
    buildFilters();
    show();
  } catch (e) {
    noteError();
    document.getElementById('summary').textContent = 'The dashboard could not be drawn: ' + e.message;
  }
})();
)js";

constexpr const char* kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
#filters label { margin-right: 1.2em; }
.chart { border: 1px solid #ddd; border-radius: 6px; padding: 0.5em 1em; margin: 1em 0; }
.chart.regressed { border-color: rgb(220,53,69); }
.chart h3 { font-size: 0.95em; margin: 0.3em 0; }
.holder { position: relative; height: 260px; }
)css";

}  // namespace

std::string dashboard_page(const std::string& title) {
  const std::string t = html_escape(title);
  return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + t + "</title><style>" + kStyle +
         "</style>\n<script src=\"chart.min.js\"></script>\n<script src=\"series-index.js\"></script>\n</head>\n"
         "<body>\n<h1>" +
         t +
         "</h1>\n<p id=\"summary\"></p>\n<div id=\"filters\"></div>\n<p id=\"shown\"></p>\n<div "
         "id=\"charts\"></div>\n<script>" +
         kScript + "</script>\n</body></html>\n";
}

}  // namespace tipbench::reports

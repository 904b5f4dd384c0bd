// The page script: reads the model from <script id="tipbench-model">, draws one Chart.js chart per
// model entry, then marks <body> with how many canvases got painted and how many JS errors
// occurred (the headless-browser test reads both). Strings reach the DOM only via textContent
// and Chart.js's canvas text, never as HTML.
#include "html_script.h"

namespace tipbench::reports::detail {

const char* const kReportStyle = R"CSS(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1200px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; } h3 { font-size: 1em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ratio { white-space: nowrap; font-variant-numeric: tabular-nums; }
.warn { background: #fee; border: 2px solid #c00; padding: 0.5em; font-weight: bold; }
.note { color: #555; font-size: 0.85em; }
.claim { font-size: 0.85em; font-style: italic; border-left: 3px solid #88a; padding-left: 0.5em; }
.chart { margin: 1em 0 2em 0; }
.chart canvas { max-height: 520px; }
)CSS";

const char* const kReportScript = R"JS(
(function () {
  'use strict';
  var errors = 0;
  window.addEventListener('error', function () { errors += 1; document.body.dataset.jsErrors = String(errors); });
  var palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
                 '#bcbd22', '#17becf'];
  function color(i) { return palette[i % palette.length]; }

  // Whiskers for bar charts: each dataset may carry `low` and `high` arrays (the 95% interval).
  var errorBars = {
    id: 'tipbenchErrorBars',
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      var horizontal = chart.options.indexAxis === 'y';
      var valueScale = horizontal ? chart.scales.x : chart.scales.y;
      chart.data.datasets.forEach(function (ds, di) {
        if (!ds.low || !chart.isDatasetVisible(di)) return;
        chart.getDatasetMeta(di).data.forEach(function (bar, i) {
          if (ds.low[i] === null || ds.high[i] === null) return;
          var a = valueScale.getPixelForValue(ds.low[i]);
          var b = valueScale.getPixelForValue(ds.high[i]);
          var at = horizontal ? bar.y : bar.x;
          ctx.save();
          ctx.strokeStyle = '#000';
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          if (horizontal) {
            ctx.moveTo(a, at); ctx.lineTo(b, at);
            ctx.moveTo(a, at - 4); ctx.lineTo(a, at + 4);
            ctx.moveTo(b, at - 4); ctx.lineTo(b, at + 4);
          } else {
            ctx.moveTo(at, a); ctx.lineTo(at, b);
            ctx.moveTo(at - 4, a); ctx.lineTo(at + 4, a);
            ctx.moveTo(at - 4, b); ctx.lineTo(at + 4, b);
          }
          ctx.stroke();
          ctx.restore();
        });
      });
    }
  };

  // Values written into heatmap cells.
  var cellLabels = {
    id: 'tipbenchCellLabels',
    afterDatasetsDraw: function (chart) {
      if (!chart.options.plugins.tipbenchCellLabels) return;
      var ctx = chart.ctx;
      chart.getDatasetMeta(0).data.forEach(function (point, i) {
        var cell = chart.data.datasets[0].data[i];
        ctx.save();
        ctx.fillStyle = '#000';
        ctx.font = '12px sans-serif';
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
        ctx.fillText(cell.v === null ? cell.note : cell.v.toFixed(1), point.x, point.y);
        ctx.restore();
      });
    }
  };

  function barsCi(spec) {
    // The axis must hold the whiskers too, not only the bars.
    var ends = [spec.reference];
    spec.datasets.forEach(function (d) {
      d.low.concat(d.high, d.values).forEach(function (v) { if (v !== null) ends.push(v); });
    });
    var axisMin = Math.min.apply(null, ends), axisMax = Math.max.apply(null, ends);
    var pad = (axisMax - axisMin) * 0.05 || 0.05;
    var valueAxis = { min: axisMin - pad, max: axisMax + pad, title: { display: true, text: spec.value_label } };
    if (spec.scale === 'log') {
      // Symmetric about the reference (1): the larger of the two log distances, and a little more.
      var reach = Math.max(Math.log(axisMax / spec.reference), Math.log(spec.reference / axisMin), Math.log(1.02)) * 1.1;
      valueAxis = { type: 'logarithmic', min: spec.reference * Math.exp(-reach), max: spec.reference * Math.exp(reach),
                    title: valueAxis.title,
                    ticks: { callback: function (v) { return 'x' + Number(v.toPrecision(3)); } } };
    }
    var datasets = spec.datasets.map(function (d, i) {
      // Floating bars from the reference (1 = no change), so a bar's length is the change.
      var bars = d.values.map(function (v) { return v === null ? null : [spec.reference, v]; });
      return { label: d.label, data: bars, low: d.low, high: d.high, backgroundColor: color(i) + '99',
               borderColor: color(i), borderWidth: 1 };
    });
    return {
      type: 'bar',
      data: { labels: spec.labels, datasets: datasets },
      options: {
        indexAxis: 'y', animation: false, responsive: true, maintainAspectRatio: false,
        scales: { x: valueAxis },
        plugins: { legend: { display: true } }
      },
      plugins: [errorBars],
      height: Math.max(200, 40 + spec.labels.length * 22 * Math.max(1, spec.datasets.length))
    };
  }

  function heatmap(spec) {
    var values = spec.cells.filter(function (c) { return c.value !== null; }).map(function (c) { return c.value; });
    var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
    var data = spec.cells.map(function (c) { return { x: c.x, y: c.y, v: c.value, note: c.note }; });
    return {
      type: 'scatter',
      data: { datasets: [{ label: spec.value_label, data: data, pointStyle: 'rect',
        radius: function (ctx) {
          var area = ctx.chart.chartArea;
          if (!area) return 10;
          return Math.max(4, Math.min((area.right - area.left) / spec.x.length, (area.bottom - area.top) / spec.y.length) / 2 - 2);
        },
        backgroundColor: function (ctx) {
          var v = ctx.raw && ctx.raw.v;
          if (v === null || v === undefined) return '#ddd';
          var t = hi > lo ? (v - lo) / (hi - lo) : 1;
          return 'rgba(' + Math.round(255 - 200 * t) + ',' + Math.round(120 + 100 * t) + ',' + Math.round(80 + 40 * t) + ',0.9)';
        } }] },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {
          x: { type: 'category', labels: spec.x, offset: true, title: { display: true, text: spec.x_label } },
          y: { type: 'category', labels: spec.y, offset: true, title: { display: true, text: spec.y_label } }
        },
        plugins: { legend: { display: false }, tipbenchCellLabels: true }
      },
      plugins: [cellLabels],
      height: Math.max(260, 160 * spec.y.length)
    };
  }

  function lines(spec) {
    var datasets = spec.datasets.map(function (d, i) {
      return { label: d.label, data: d.points, yAxisID: d.axis, borderColor: color(i), backgroundColor: color(i),
               borderDash: d.dashed ? [6, 4] : [], showLine: true, tension: 0 };
    });
    var scales = { x: { type: 'linear', grace: '5%', title: { display: true, text: spec.x_label } },
                   y: { position: 'left', grace: '10%', title: { display: true, text: spec.y_label } } };
    if (spec.y2_label) scales.y2 = { position: 'right', grace: '10%', grid: { drawOnChartArea: false }, title: { display: true, text: spec.y2_label } };
    return { type: 'scatter', data: { datasets: datasets },
             options: { animation: false, responsive: true, maintainAspectRatio: false, scales: scales }, height: 320 };
  }

  function scatter(spec) {
    var datasets = spec.datasets.map(function (d, i) {
      return { label: d.label, data: d.points, backgroundColor: color(i), radius: 6 };
    });
    return { type: 'scatter', data: { datasets: datasets },
             options: { animation: false, responsive: true, maintainAspectRatio: false,
                        scales: { x: { grace: '10%', title: { display: true, text: spec.x_label } },
                                  y: { grace: '10%', title: { display: true, text: spec.y_label } } } }, height: 320 };
  }

  function trend(spec) {
    var datasets = spec.datasets.map(function (d, i) {
      return { label: d.label, data: d.values, borderColor: color(i), backgroundColor: color(i), spanGaps: true, tension: 0 };
    });
    return { type: 'line', data: { labels: spec.x_labels, datasets: datasets },
             options: { animation: false, responsive: true, maintainAspectRatio: false,
                        scales: { y: { title: { display: true, text: spec.y_label } } } }, height: 320 };
  }

  function ladder(spec) {
    var datasets = [{ label: spec.value_label, data: spec.values, backgroundColor: color(0) + '99',
                      borderColor: color(0), borderWidth: 1 }];
    if (spec.consumption !== null) {
      // A flat line across the rungs: a rung whose bar is below it cannot keep the model fed.
      datasets.push({ type: 'line', label: spec.consumption_label,
                      data: spec.labels.map(function () { return spec.consumption; }),
                      borderColor: color(1), backgroundColor: color(1), borderDash: [6, 4], pointRadius: 0 });
    }
    return { type: 'bar', data: { labels: spec.labels, datasets: datasets },
             options: { animation: false, responsive: true, maintainAspectRatio: false,
                        scales: { y: { beginAtZero: true, title: { display: true, text: spec.value_label } } } },
             height: 320 };
  }

  var builders = { bars_ci: barsCi, heatmap: heatmap, lines: lines, scatter: scatter, trend: trend, ladder: ladder };

  function painted(canvas) {
    var ctx = canvas.getContext('2d');
    var pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    for (var i = 3; i < pixels.length; i += 4) { if (pixels[i] !== 0) return true; }
    return false;
  }

  function render() {
    var model = JSON.parse(document.getElementById('tipbench-model').textContent);
    var host = document.getElementById('charts');
    var drawn = 0;
    model.charts.forEach(function (spec) {
      var build = builders[spec.kind];
      if (!build) return;
      var config = build(spec);
      var box = document.createElement('div');
      box.className = 'chart';
      var title = document.createElement('h3');
      title.textContent = spec.title;
      var holder = document.createElement('div');
      holder.style.position = 'relative';
      holder.style.height = config.height + 'px';
      var canvas = document.createElement('canvas');
      canvas.dataset.kind = spec.kind;
      holder.appendChild(canvas);
      box.appendChild(title);
      box.appendChild(holder);
      host.appendChild(box);
      delete config.height;
      new Chart(canvas.getContext('2d'), config);
      if (painted(canvas)) drawn += 1;
    });
    document.body.dataset.chartsExpected = String(model.charts.length);
    document.body.dataset.chartsDrawn = String(drawn);
    document.body.dataset.jsErrors = String(errors);
  }

  try {
    if (typeof Chart === 'undefined') throw new Error('Chart.js did not load');
    render();
  } catch (e) {
    errors += 1;
    document.body.dataset.jsErrors = String(errors);
    var p = document.createElement('p');
    p.className = 'warn';
    p.textContent = 'The charts could not be drawn: ' + e.message;
    document.body.insertBefore(p, document.body.firstChild);
  }
})();
)JS";

}  // namespace tipbench::reports::detail

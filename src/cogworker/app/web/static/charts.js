// cogworker dashboard: Overview's charts, and the charts a page declares on a canvas
// (`data-chart`: a type, labels and datasets, as the Metrics pages do). Loaded after
// app.js and Chart.js by the pages that have charts.
(function () {
  'use strict';

  // One Chart.js instance per canvas: the data sits in the polled part, the
  // canvases outside it, and a poll updates each instance in place. Axes and
  // labels take the page's colours, dark mode's included.
  var THROUGHPUT_POINTS = 60;
  var lastTotals = null;

  function color(name) {
    return window.getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function chartOptions() {
    var text = color('--color-muted');
    var grid = color('--color-border');
    var axis = { ticks: { color: text }, grid: { color: grid }, border: { color: grid } };
    return {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: { mode: 'index', intersect: false },
      plugins: { legend: { labels: { color: text } } },
      scales: { x: axis, y: Object.assign({ beginAtZero: true }, axis, { ticks: { color: text, precision: 0 } }) }
    };
  }

  function series(label, cssColor) {
    var value = color(cssColor);
    return { label: label, data: [], borderColor: value, backgroundColor: value, pointRadius: 2 };
  }

  function chartOn(canvas, type, datasets) {
    return window.Chart.getChart(canvas) ||
      new window.Chart(canvas, { type: type, data: { labels: [], datasets: datasets }, options: chartOptions() });
  }

  // Runs per day: bars, succeeded and failed side by side.
  function drawDaily() {
    var canvas = document.getElementById('cw-chart');
    var holder = document.getElementById('cw-chart-data');
    if (!canvas || !holder || !window.Chart) return;
    var data = JSON.parse(holder.getAttribute('data-chart'));
    var chart = chartOn(canvas, 'bar', [series('Succeeded', '--color-ok'), series('Failed', '--color-danger')]);
    chart.data.labels = data.labels;
    chart.data.datasets[0].data = data.succeeded;
    chart.data.datasets[1].data = data.failed;
    chart.update('none');
  }

  // Live throughput: what the totals grew by since the previous poll, a point per poll.
  function drawThroughput() {
    var canvas = document.getElementById('cw-throughput');
    var holder = document.getElementById('cw-totals');
    if (!canvas || !holder || !window.Chart) return;
    var chart = chartOn(canvas, 'line', [series('Processed', '--color-accent'), series('Failed', '--color-danger')]);
    var totals = {
      processed: parseInt(holder.getAttribute('data-processed'), 10),
      failed: parseInt(holder.getAttribute('data-failed'), 10)
    };
    if (isNaN(totals.processed) || isNaN(totals.failed)) { lastTotals = null; return; }
    var last = lastTotals;
    lastTotals = totals;
    // The first sample, or a counter reset: nothing to take a difference of.
    if (!last || totals.processed < last.processed || totals.failed < last.failed) return;
    chart.data.labels.push(window.cogworker.clock(new Date()));
    chart.data.datasets[0].data.push(totals.processed - last.processed);
    chart.data.datasets[1].data.push(totals.failed - last.failed);
    if (chart.data.labels.length > THROUGHPUT_POINTS) {
      chart.data.labels.shift();
      chart.data.datasets.forEach(function (set) { set.data.shift(); });
    }
    chart.update('none');
  }

  // A canvas's own chart: {type, labels, datasets: [{label, color (a CSS variable), data}]}.
  function drawDeclared() {
    if (!window.Chart) return;
    document.querySelectorAll('canvas[data-chart]').forEach(function (canvas) {
      var spec = JSON.parse(canvas.getAttribute('data-chart'));
      var chart = chartOn(canvas, spec.type, spec.datasets.map(function (set) {
        return series(set.label, set.color);
      }));
      chart.data.labels = spec.labels;
      spec.datasets.forEach(function (set, index) { chart.data.datasets[index].data = set.data; });
      chart.update('none');
    });
  }

  function drawCharts() {
    drawDaily();
    drawThroughput();
    drawDeclared();
  }

  // Once per poll: htmx fires afterSwap on each swapped element, the out-of-band parts
  // too; the charts' data is in the live part.
  document.addEventListener('htmx:afterSwap', function (event) {
    if (event.target && event.target.id === 'cw-live') drawCharts();
  });
  drawCharts();
})();

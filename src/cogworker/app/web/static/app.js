// cogworker dashboard behaviour. Loaded as a file (the CSP allows no inline
// script); every listener is delegated from `document`, so it keeps working
// on the parts htmx swaps in.
(function () {
  'use strict';

  // -- live updates -------------------------------------------------------
  // The live part of a page (#cw-live) is re-fetched every N seconds: the
  // reader's choice (off, or 2 s at the least), kept in localStorage; paused
  // while the tab is hidden or rows are selected (a poll would undo the
  // selection).
  var POLL_KEY = 'cogworker.poll';
  var CHOICES = [0, 2, 5, 10, 30, 60];
  var FLOOR = 2;
  var DEFAULT = 5;
  var timer = null;

  function stored() {
    try {
      var value = parseInt(window.localStorage.getItem(POLL_KEY), 10);
      return CHOICES.indexOf(value) >= 0 ? value : DEFAULT;
    } catch (e) {
      return DEFAULT;
    }
  }

  function store(value) {
    try { window.localStorage.setItem(POLL_KEY, String(value)); } catch (e) { /* private mode */ }
  }

  function paused() {
    return document.hidden || document.querySelector('.cw-select:checked, .cw-clip.cw-open') !== null;
  }

  function schedule() {
    window.clearTimeout(timer);
    var seconds = stored();
    if (seconds === 0) return;
    timer = window.setTimeout(tick, Math.max(seconds, FLOOR) * 1000);
  }

  function tick() {
    var live = document.getElementById('cw-live');
    if (live && window.htmx && !paused()) window.htmx.trigger(live, 'cw-poll');
    schedule();
  }

  function setUpPolling() {
    var select = document.getElementById('cw-poll-interval');
    if (select) {
      select.value = String(stored());
      select.addEventListener('change', function () {
        store(parseInt(select.value, 10));
        schedule();
      });
    }
    document.addEventListener('visibilitychange', function () { if (!document.hidden) schedule(); });
    schedule();
  }

  // -- connection state ------------------------------------------------------
  // A poll that fails (Redis down: a 503; the server gone: no answer) shows
  // "disconnected, last update HH:MM:SS" in the header, the time of the last
  // poll that worked; the next one that works clears it.
  var lastUpdate = new Date();
  var RETRY_SECONDS = 3;

  function clock(date) {
    return [date.getHours(), date.getMinutes(), date.getSeconds()].map(function (n) {
      return String(n).padStart(2, '0');
    }).join(':');
  }

  function why(xhr) {
    if (!xhr || xhr.status === 0) return 'the dashboard server is not answering';
    if (xhr.status === 503) return 'Redis is not answering';
    return 'the server answered ' + xhr.status;
  }

  document.addEventListener('htmx:afterRequest', function (event) {
    var badge = document.getElementById('cw-connection');
    if (!badge || !event.detail.elt || event.detail.elt.id !== 'cw-live') return;
    if (event.detail.successful) {
      lastUpdate = new Date();
      badge.hidden = true;
      return;
    }
    badge.textContent = 'disconnected, last update ' + clock(lastUpdate);
    badge.title = 'Live updates failed: ' + why(event.detail.xhr) + '. Still trying.';
    badge.hidden = false;
  });

  // The 503 page: ask /health every few seconds, reload once it is green.
  function retryUntilHealthy() {
    var note = document.getElementById('cw-retry');
    if (!note) return;
    var url = note.getAttribute('data-cw-health');
    function later() {
      note.textContent = 'Still unavailable at ' + clock(new Date()) + '; trying again in ' + RETRY_SECONDS + ' s…';
      window.setTimeout(attempt, RETRY_SECONDS * 1000);
    }
    function attempt() {
      window.fetch(url, { cache: 'no-store', credentials: 'same-origin' }).then(function (response) {
        if (response.ok) window.location.reload(); else later();
      }, later);
    }
    window.setTimeout(attempt, RETRY_SECONDS * 1000);
  }

  // -- a bulk action's progress ------------------------------------------------
  // While it runs, its page asks the progress endpoint every second and shows the
  // counts; once it has stopped (or this server no longer knows it), the page is
  // loaded again to show how it ended.
  var BULK_SECONDS = 1;

  function followBulk() {
    var box = document.getElementById('cw-bulk');
    if (!box || box.getAttribute('data-cw-bulk-state') !== 'running') return;
    var url = box.getAttribute('data-cw-bulk-progress');
    function show(progress) {
      box.querySelectorAll('[data-cw-bulk-count]').forEach(function (cell) {
        var value = progress[cell.getAttribute('data-cw-bulk-count')];
        if (typeof value === 'number') cell.textContent = value.toLocaleString('en-US');
      });
      if (progress.state !== 'running') window.location.reload();
      else window.setTimeout(ask, BULK_SECONDS * 1000);
    }
    function ask() {
      window.fetch(url, { cache: 'no-store', credentials: 'same-origin' })
        .then(function (response) {
          if (!response.ok) throw new Error('progress: ' + response.status);
          return response.json();
        })
        .then(show, function () { window.setTimeout(ask, RETRY_SECONDS * 1000); });
    }
    window.setTimeout(ask, BULK_SECONDS * 1000);
  }

  // -- one line per row ----------------------------------------------------------
  // A long cell shows its start on one line (its text in full as a tooltip); a
  // click, or Enter, opens it in place and closes it again. Polls wait while one
  // is open, so it stays open while it is read.
  function toggleCell(cell) { cell.classList.toggle('cw-open'); }

  document.addEventListener('click', function (event) {
    var cell = event.target.closest && event.target.closest('.cw-clip');
    if (cell && !event.target.closest('a, button, input')) toggleCell(cell);
  });

  document.addEventListener('keydown', function (event) {
    if (event.key !== 'Enter' || !event.target.classList || !event.target.classList.contains('cw-clip')) return;
    event.preventDefault();
    toggleCell(event.target);
  });

  // -- selection and confirmations -----------------------------------------
  function selectedIn(form) {
    return form ? form.querySelectorAll('.cw-select:checked').length : 0;
  }

  function refreshSelectionButtons() {
    document.querySelectorAll('[data-needs-selection]').forEach(function (button) {
      button.disabled = selectedIn(button.form) === 0;
    });
  }

  document.addEventListener('change', function (event) {
    var target = event.target;
    if (target.classList && target.classList.contains('cw-select-all')) {
      target.form.querySelectorAll('.cw-select').forEach(function (box) { box.checked = target.checked; });
    }
    refreshSelectionButtons();
  });

  // A submit button's data-confirm text ("{n}": how many rows are selected) must be accepted first.
  document.addEventListener('submit', function (event) {
    var button = event.submitter;
    var text = button && button.getAttribute('data-confirm');
    if (!text) return;
    var question = text.replace('{n}', String(selectedIn(event.target)));
    if (!window.confirm(question)) event.preventDefault();
  });

  // -- the memory sparkline's readout ---------------------------------------
  // The spec's hover readout: the sample nearest the pointer, as a marker
  // line + dot and a tooltip with its value and local time; the same from
  // the keyboard (focus, then the arrow keys). A poll that replaces the card
  // under the pointer (or the focus) shows the readout again on the new one.
  var hover = null;
  var focused = null;

  function part(el, cls) {
    var node = el.querySelector('.' + cls);
    if (!node) {
      node = document.createElement('div');
      node.className = cls;
      el.appendChild(node);
    }
    return node;
  }

  function label(el, visible) {
    var node = el.querySelector('.cw-spark-label');
    if (node) node.classList.toggle('hidden', !visible);
  }

  function hide(el) {
    el.querySelectorAll('.cw-spark-line, .cw-spark-dot, .cw-spark-tip').forEach(function (n) { n.remove(); });
    label(el, true);
  }

  function values(el) { return JSON.parse(el.getAttribute('data-cw-spark')); }

  function indexAt(el, clientX) {
    var count = values(el).length;
    var rect = el.getBoundingClientRect();
    var frac = Math.min(Math.max((clientX - rect.left) / rect.width, 0), 1);
    return Math.min(Math.floor(frac * count), count - 1);
  }

  function show(el, i) {
    var samples = values(el);
    var start = parseInt(el.getAttribute('data-cw-spark-start'), 10);
    var step = parseInt(el.getAttribute('data-cw-spark-step'), 10);
    var lo = parseFloat(el.getAttribute('data-cw-spark-min'));
    var hi = parseFloat(el.getAttribute('data-cw-spark-max'));
    var rect = el.getBoundingClientRect();
    label(el, false);
    var x = (i + 0.5) / samples.length * rect.width;
    var kb = samples[i];
    part(el, 'cw-spark-line').style.left = x + 'px';
    var dot = part(el, 'cw-spark-dot');
    dot.hidden = kb === null;
    dot.style.left = x + 'px';
    if (kb !== null) dot.style.top = (hi - kb) / (hi - lo) * rect.height + 'px';
    var tip = part(el, 'cw-spark-tip');
    var when = new Date((start + i * step) * 1000).toLocaleString();
    tip.textContent = (kb === null ? 'no data' : (kb / 1024).toFixed(1) + 'M') + ' · ' + when;
    tip.style.left = x + 'px';
    tip.style.transform = 'translateX(-' + (i / Math.max(samples.length - 1, 1) * 100) + '%)';
    var readout = document.getElementById('cw-spark-readout');
    if (readout && focused) readout.textContent = tip.textContent;
  }

  function find(id) {
    var all = document.querySelectorAll('.cw-spark');
    for (var i = 0; i < all.length; i++) if (all[i].getAttribute('data-cw-spark-id') === id) return all[i];
    return null;
  }

  function latest(el) {
    var samples = values(el);
    for (var i = samples.length - 1; i >= 0; i--) if (samples[i] !== null) return i;
    return samples.length - 1;
  }

  document.addEventListener('mousemove', function (event) {
    var el = event.target.closest && event.target.closest('.cw-spark');
    if (hover && (!el || el.getAttribute('data-cw-spark-id') !== hover.id)) {
      var old = find(hover.id);
      if (old) hide(old);
      hover = null;
    }
    if (!el) return;
    hover = { id: el.getAttribute('data-cw-spark-id'), x: event.clientX };
    show(el, indexAt(el, event.clientX));
  });

  document.addEventListener('focusin', function (event) {
    var el = event.target.closest && event.target.closest('.cw-spark');
    if (!el) return;
    if (!focused || focused.id !== el.getAttribute('data-cw-spark-id')) {
      focused = { id: el.getAttribute('data-cw-spark-id'), i: latest(el) };
    }
    show(el, focused.i);
  });

  document.addEventListener('focusout', function (event) {
    var el = event.target.closest && event.target.closest('.cw-spark');
    if (!el || el.isConnected === false) return;  // swapped out by a poll: keep the state
    focused = null;
    hide(el);
  });

  document.addEventListener('keydown', function (event) {
    var el = event.target.closest && event.target.closest('.cw-spark');
    if (!el || !focused) return;
    var count = values(el).length;
    var moves = { ArrowLeft: -1, ArrowRight: 1, Home: -count, End: count };
    if (!(event.key in moves)) return;
    event.preventDefault();
    focused.i = Math.min(Math.max(focused.i + moves[event.key], 0), count - 1);
    show(el, focused.i);
  });

  document.addEventListener('htmx:afterSwap', function (event) {
    if (focused) {
      var again = find(focused.id);
      if (again) { again.focus({ preventScroll: true }); show(again, focused.i); }
    }
    if (hover) {
      var el = find(hover.id);
      if (el) show(el, indexAt(el, hover.x));
    }
    refreshSelectionButtons();
  });

  setUpPolling();
  retryUntilHealthy();
  followBulk();
  refreshSelectionButtons();
  // For charts.js (Overview), which shows times as the badge does.
  window.cogworker = { clock: clock };
})();

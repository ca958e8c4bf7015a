// The browser side of the HTML report: plain ES2017 that reads the chart JSON embedded in the
// page (src/report/charts-data.ts) and draws each `data-chart` element with the inlined uPlot —
// throughput lines with min–max bands, log-x percentile curves, trial scatter with reference
// lines, delta bars with CI whiskers and tolerance marks, and step charts (a nightly series or a
// bisect's probes, with their change points). Labels reach the DOM only through
// uPlot's textContent, never as HTML. Each drawn chart gets data-rendered="1" for tests.
export const CHARTS_JS = `(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('perf-data').textContent);
  var color = {};
  data.targets.forEach(function (t) { color[t.id] = t.color; });
  var VERDICT = { fail: '#dc2626', warn: '#d97706', better: '#16a34a', other: '#64748b' };
  var mounted = [];
  var px = function (n) { return Math.round(n * (window.devicePixelRatio || 1)); };

  function rgba(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + a + ')';
  }
  function num(v) {
    if (v == null || !isFinite(v)) return '–';
    if (v === 0) return '0';
    var a = Math.abs(v);
    return a >= 1000 ? Math.round(v).toLocaleString('en-US') : a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
  }
  function pctOf(x) {
    if (x == null) return '';
    if (x <= 1.0001) return '0';
    return (100 - 100 / x).toFixed(Math.max(0, Math.round(Math.log10(x)) - 2));
  }
  function widthOf(el) { return Math.max(280, Math.floor(el.getBoundingClientRect().width) || 600); }
  function yAxis(unit) { return { label: unit, size: 64, values: function (u, vs) { return vs.map(num); } }; }

  function lines(el, c) {
    var series = [{}];
    var bands = [], hidden = [], pair = {};
    c.series.forEach(function (s, i) {
      var col = color[s.target] || '#475569';
      series.push({
        label: s.label, stroke: s.band ? rgba(col, 0.35) : col, width: s.band ? 1 : 2, dash: s.dash ? [6, 4] : undefined,
        points: { show: c.x.length <= 12 && !s.band, size: 6 }, spanGaps: true,
      });
      if (s.band) { hidden.push(i + 1); (pair[s.target] = pair[s.target] || {})[s.band] = i + 1; }
    });
    Object.keys(pair).forEach(function (t) {
      if (pair[t].max && pair[t].min) bands.push({ series: [pair[t].max, pair[t].min], fill: rgba(color[t] || '#475569', 0.12) });
    });
    var x = { time: false };
    var xAxis = { label: 'seconds into the measured window', incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600] };
    if (c.type === 'percentiles') {
      x = { time: false, distr: 3, log: 10, range: function () { return [1, 1e5]; } };
      xAxis = { label: 'percentile (%)', splits: function () { return [1, 10, 100, 1e3, 1e4, 1e5]; }, filter: function (u, vs) { return vs; }, values: function (u, vs) { return vs.map(pctOf); } };
    }
    var u = mount(el, { height: 280, padding: [12, 28, 0, 0], series: series, bands: bands, scales: { x: x }, axes: [xAxis, yAxis(c.unit)] }, [c.x].concat(c.series.map(function (s) { return s.values; })));
    var rows = u.root.querySelectorAll('.u-legend .u-series'), skip = series.length - rows.length;
    hidden.forEach(function (i) { if (rows[i - skip]) rows[i - skip].style.display = 'none'; });
  }

  function scatter(el, c) {
    var refs = c.refs || [];
    var series = [{}];
    c.series.forEach(function (s) {
      var col = color[s.target] || '#475569';
      series.push({ label: s.label, stroke: col, fill: col, paths: function () { return null; }, points: { show: true, size: 9, fill: rgba(col, 0.8) } });
    });
    var yRange = function (u, min, max) {
      refs.forEach(function (r) { min = Math.min(min, r.value); max = Math.max(max, r.value); });
      return uPlot.rangeNum(min, max, 0.2, true);
    };
    mount(el, {
      height: 220, padding: [12, 16, 0, 0], series: series,
      scales: { x: { time: false, range: function (u, a, b) { return [a - 0.7, b + 0.7]; } }, y: { range: yRange } },
      axes: [{ label: 'trial, in run order', incrs: [1, 2, 5, 10, 20, 50], values: function (u, vs) { return vs.map(function (v) { return String(v); }); } }, yAxis(c.unit)],
      hooks: { draw: [function (u) {
        var ctx = u.ctx;
        refs.forEach(function (r) {
          var y = u.valToPos(r.value, 'y', true), below = y < u.bbox.top + u.bbox.height / 2;
          ctx.save(); ctx.strokeStyle = '#0f172a'; ctx.setLineDash([px(5), px(4)]); ctx.lineWidth = px(1);
          ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke();
          ctx.fillStyle = '#0f172a'; ctx.font = px(11) + 'px sans-serif'; ctx.textAlign = 'left'; ctx.textBaseline = below ? 'top' : 'bottom';
          ctx.fillText(r.label + ' ' + num(r.value), u.bbox.left + px(6), y + (below ? px(3) : -px(3))); ctx.restore();
        });
      }] },
    }, [c.x].concat(c.series.map(function (s) { return s.values; })));
  }

  function delta(el, c) {
    var bars = c.bars, n = bars.length;
    var xs = bars.map(function (b, i) { return i; });
    var lo = 0, hi = 0;
    bars.forEach(function (b) { [b.delta, b.lo, b.hi, b.tolerance].forEach(function (v) { if (v != null) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }); });
    var fillOf = function (b) { return b.verdict === 'fail' ? VERDICT.fail : b.verdict === 'warn' ? VERDICT.warn : b.change === 'better' ? VERDICT.better : VERDICT.other; };
    mount(el, {
      height: 300, padding: [16, 96, 0, 0], legend: { show: false }, cursor: { show: false },
      series: [{}, { label: 'Δ %', paths: function () { return null; }, points: { show: false } }],
      scales: { x: { time: false, range: function () { return [-0.5, n - 0.5]; } }, y: { range: function () { return uPlot.rangeNum(lo, hi, 0.15, true); } } },
      axes: [
        { splits: function () { return xs; }, values: function (u, vs) { return vs.map(function (i) { var b = bars[i]; return b ? (b.gating ? '★ ' : '') + b.label : ''; }); }, rotate: n > 5 ? -35 : 0, size: n > 5 ? 110 : 40, grid: { show: false } },
        { label: 'Δ % (candidate vs baseline)', size: 64, values: function (u, vs) { return vs.map(function (v) { return v === 0 ? '0' : (v > 0 ? '+' : '') + v.toFixed(Math.abs(v) < 10 ? 1 : 0); }); } },
      ],
      hooks: { draw: [function (u) {
        var ctx = u.ctx, y0 = u.valToPos(0, 'y', true), half = (u.valToPos(1, 'x', true) - u.valToPos(0, 'x', true)) * 0.3;
        ctx.save();
        ctx.strokeStyle = '#0f172a'; ctx.lineWidth = px(1);
        ctx.beginPath(); ctx.moveTo(u.bbox.left, y0); ctx.lineTo(u.bbox.left + u.bbox.width, y0); ctx.stroke();
        bars.forEach(function (b, i) {
          var cx = u.valToPos(i, 'x', true), y = u.valToPos(b.delta, 'y', true);
          ctx.fillStyle = fillOf(b); ctx.globalAlpha = b.gating ? 0.9 : 0.55;
          ctx.fillRect(cx - half, Math.min(y, y0), half * 2, Math.max(px(1), Math.abs(y - y0)));
          ctx.globalAlpha = 1;
          if (b.lo != null && b.hi != null) {
            var a = u.valToPos(b.lo, 'y', true), z = u.valToPos(b.hi, 'y', true), w = half * 0.45;
            ctx.strokeStyle = '#0f172a'; ctx.lineWidth = px(1.5); ctx.setLineDash([]);
            ctx.beginPath(); ctx.moveTo(cx, a); ctx.lineTo(cx, z); ctx.moveTo(cx - w, a); ctx.lineTo(cx + w, a); ctx.moveTo(cx - w, z); ctx.lineTo(cx + w, z); ctx.stroke();
          }
          var t = u.valToPos(b.tolerance, 'y', true);
          ctx.strokeStyle = VERDICT.fail; ctx.lineWidth = px(2); ctx.setLineDash([px(4), px(3)]);
          ctx.beginPath(); ctx.moveTo(cx - half * 1.25, t); ctx.lineTo(cx + half * 1.25, t); ctx.stroke(); ctx.setLineDash([]);
          ctx.fillStyle = '#0f172a'; ctx.font = px(11) + 'px sans-serif'; ctx.textAlign = 'center';
          var up = b.delta >= 0, edge = up ? Math.min(y, b.hi != null ? u.valToPos(b.hi, 'y', true) : y) : Math.max(y, b.lo != null ? u.valToPos(b.lo, 'y', true) : y);
          ctx.textBaseline = up ? 'bottom' : 'top';
          ctx.fillText((b.delta >= 0 ? '+' : '−') + Math.abs(b.delta).toFixed(1) + ' %', cx, edge + (up ? -px(3) : px(3)));
        });
        ctx.restore();
      }] },
    }, [xs, bars.map(function (b) { return b.delta; })]);
  }

  function steps(el, c) {
    var n = c.values.length, xs = c.values.map(function (v, i) { return i; });
    var KIND = { bad: VERDICT.fail, good: VERDICT.better, skip: '#94a3b8', other: '#2563eb' };
    var lo = Infinity, hi = -Infinity;
    var see = function (v) { if (v != null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } };
    c.values.forEach(see); (c.lo || []).forEach(see); (c.hi || []).forEach(see); (c.segments || []).forEach(function (s) { see(s.mean); });
    if (c.ref) see(c.ref.value);
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    var every = Math.max(1, Math.ceil(n / 12));
    mount(el, {
      height: 260, padding: [18, 24, 0, 0], legend: { show: false },
      series: [{}, { label: c.title, stroke: '#2563eb', width: c.line ? 1.5 : 0, paths: c.line ? undefined : function () { return null; }, spanGaps: false, points: { show: false } }],
      scales: { x: { time: false, range: function () { return [-0.5, n - 0.5]; } }, y: { range: function () { return uPlot.rangeNum(lo, hi, 0.15, true); } } },
      axes: [
        { splits: function () { return xs.filter(function (i) { return i % every === 0 || i === n - 1; }); }, values: function (u, vs) { return vs.map(function (i) { return c.labels[i] || ''; }); }, rotate: n > 6 ? -30 : 0, size: n > 6 ? 70 : 40 },
        yAxis(c.unit),
      ],
      hooks: { draw: [function (u) {
        var ctx = u.ctx, top = u.bbox.top, bottom = u.bbox.top + u.bbox.height;
        ctx.save();
        if (c.ref) {
          var ry = u.valToPos(c.ref.value, 'y', true);
          ctx.strokeStyle = '#64748b'; ctx.lineWidth = px(1); ctx.setLineDash([px(2), px(3)]);
          ctx.beginPath(); ctx.moveTo(u.bbox.left, ry); ctx.lineTo(u.bbox.left + u.bbox.width, ry); ctx.stroke();
        }
        (c.segments || []).forEach(function (s) {
          var y = u.valToPos(s.mean, 'y', true);
          ctx.strokeStyle = '#0f172a'; ctx.lineWidth = px(1.5); ctx.setLineDash([px(6), px(4)]);
          ctx.beginPath(); ctx.moveTo(u.valToPos(s.from - 0.4, 'x', true), y); ctx.lineTo(u.valToPos(s.to - 1 + 0.4, 'x', true), y); ctx.stroke();
        });
        ctx.setLineDash([]);
        c.values.forEach(function (v, i) {
          if (v == null && c.kinds && c.kinds[i] === 'skip' && c.ref) {
            // A skipped probe has no value: a hollow grey ring on the reference line.
            ctx.strokeStyle = KIND.skip; ctx.lineWidth = px(2);
            ctx.beginPath(); ctx.arc(u.valToPos(i, 'x', true), u.valToPos(c.ref.value, 'y', true), px(5), 0, 2 * Math.PI); ctx.stroke();
            return;
          }
          if (v == null) return;
          var x = u.valToPos(i, 'x', true), y = u.valToPos(v, 'y', true);
          var l = c.lo && c.lo[i], h = c.hi && c.hi[i];
          if (l != null && h != null) {
            ctx.strokeStyle = '#334155'; ctx.lineWidth = px(1);
            ctx.beginPath(); ctx.moveTo(x, u.valToPos(l, 'y', true)); ctx.lineTo(x, u.valToPos(h, 'y', true)); ctx.stroke();
          }
          ctx.fillStyle = KIND[(c.kinds && c.kinds[i]) || 'other'] || KIND.other;
          ctx.beginPath(); ctx.arc(x, y, px(4), 0, 2 * Math.PI); ctx.fill();
        });
        c.marks.forEach(function (m) {
          var x = (u.valToPos(m.at - 1, 'x', true) + u.valToPos(m.at, 'x', true)) / 2;
          ctx.strokeStyle = VERDICT.fail; ctx.lineWidth = px(2); ctx.setLineDash([px(5), px(3)]);
          ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, bottom); ctx.stroke(); ctx.setLineDash([]);
          ctx.fillStyle = VERDICT.fail; ctx.font = px(11) + 'px sans-serif'; ctx.textAlign = 'left'; ctx.textBaseline = 'top';
          ctx.fillText(m.label, x + px(4), top + px(2));
        });
        ctx.restore();
      }] },
    }, [xs, c.values]);
  }

  function mount(el, opts, d) {
    opts.width = widthOf(el);
    opts.legend = opts.legend || { live: false };
    var u = new uPlot(opts, d, el);
    mounted.push({ u: u, el: el });
    el.setAttribute('data-rendered', '1');
    return u;
  }

  var draw = { throughput: lines, percentiles: lines, scatter: scatter, delta: delta, steps: steps };
  Array.prototype.forEach.call(document.querySelectorAll('[data-chart]'), function (el) {
    var c = data.charts[el.getAttribute('data-chart')];
    try { if (c) draw[c.type](el, c); } catch (e) { el.textContent = 'chart failed: ' + e.message; el.setAttribute('data-rendered', 'error'); throw e; }
  });
  var timer;
  window.addEventListener('resize', function () {
    clearTimeout(timer);
    timer = setTimeout(function () { mounted.forEach(function (m) { m.u.setSize({ width: widthOf(m.el), height: m.u.height }); }); }, 100);
  });
})();
`;

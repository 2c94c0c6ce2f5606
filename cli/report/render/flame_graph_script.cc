#include "cli/report/render/flame_graph_script.h"

namespace memprof::report::render {
namespace {

// Monospace labels, so both the C++ writer and the script can tell how many
// characters fit in a rectangle without measuring text.
constexpr std::string_view kStyle = R"css(
text { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 12px; fill: #000; }
#title { font-size: 17px; text-anchor: middle; }
#subtitle { fill: #555; text-anchor: middle; }
#matched { text-anchor: end; }
.btn { cursor: pointer; fill: #1a4f8b; text-decoration: underline; }
#reset { display: none; }
g.f { cursor: pointer; }
g.f text { pointer-events: none; }
g.f:hover rect { stroke: #000; stroke-width: 0.7; }
g.m rect { stroke: #888; stroke-dasharray: 2 2; }
g.ancestor rect { opacity: 0.55; }
)css";

// Plain ES5 in one closure: it must run in any browser that opens an svg,
// define no globals, and never fetch anything.
constexpr std::string_view kScript = R"js(
(function () {
  'use strict';
  var svg = document.documentElement;
  window.addEventListener('error', function (event) {
    svg.setAttribute('data-flamegraph-error', String(event.message));
  });
  var total = parseFloat(svg.getAttribute('data-total'));
  var unit = svg.getAttribute('data-unit');
  var padX = parseFloat(svg.getAttribute('data-pad'));
  var charWidth = parseFloat(svg.getAttribute('data-char-width'));
  var fullWidth = parseFloat(svg.getAttribute('width')) - 2 * padX;
  var details = document.getElementById('details');
  var defaultDetails = details.textContent;
  var matched = document.getElementById('matched');
  var resetButton = document.getElementById('reset');
  var matchFill = 'rgb(225,70,225)';
  var frames = [];
  var zoomed = null;
  var lastSearch = '';

  // The same units as the C++ writer: B, KiB, MiB...; objects as integers.
  function human(value) {
    if (unit === 'objects') return Math.round(value).toLocaleString('en-US') + ' objects';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var i = 0;
    while (Math.abs(value) >= 1024 && i < units.length - 1) { value /= 1024; ++i; }
    return i === 0 ? Math.round(value) + ' B' : value.toFixed(1) + ' ' + units[i];
  }

  function share(value, of) {
    return of > 0 ? (100 * value / of).toFixed(2) + '%' : 'n/a';
  }

  // As many characters as fit, ".." marking a cut; nothing below 3.
  function label(name, width) {
    var fit = Math.floor((width - 6) / charWidth);
    if (fit >= name.length) return name;
    return fit < 3 ? '' : name.substring(0, fit - 2) + '..';
  }

  function readFrames() {
    var groups = document.querySelectorAll('g.f');
    for (var i = 0; i < groups.length; ++i) {
      var g = groups[i];
      var rect = g.querySelector('rect');
      g.setAttribute('data-i', String(i));
      frames.push({
        g: g, rect: rect, text: g.querySelector('text'),
        name: g.querySelector('title').textContent.split('\n')[0],
        merged: g.classList.contains('m'),
        value: parseFloat(g.getAttribute('data-v')),
        depth: parseInt(g.getAttribute('data-d'), 10),
        x: parseFloat(rect.getAttribute('x')),
        w: parseFloat(rect.getAttribute('width')),
        fill: rect.getAttribute('fill')
      });
    }
  }

  function frameOf(event) {
    var g = event.target.closest ? event.target.closest('g.f') : null;
    return g ? frames[parseInt(g.getAttribute('data-i'), 10)] : null;
  }

  function place(f, x, w) {
    f.rect.setAttribute('x', x.toFixed(2));
    f.rect.setAttribute('width', w.toFixed(2));
    f.text.setAttribute('x', (x + 3).toFixed(2));
    f.text.textContent = label(f.name, w);
  }

  // Frames are nested intervals: z's callees lie within its x range on the
  // rows above it, its callers span it on the rows below.
  function zoom(z) {
    var eps = 0.01;
    var scale = fullWidth / z.w;
    zoomed = z.depth === 0 ? null : z;
    frames.forEach(function (f) {
      var inside = f.depth >= z.depth && f.x >= z.x - eps && f.x + f.w <= z.x + z.w + eps;
      var ancestor = f.depth < z.depth && f.x <= z.x + eps && f.x + f.w >= z.x + z.w - eps;
      f.g.style.display = inside || ancestor ? '' : 'none';
      f.g.classList.toggle('ancestor', ancestor);
      if (inside) place(f, padX + (f.x - z.x) * scale, f.w * scale);
      if (ancestor) place(f, padX, fullWidth);
    });
    resetButton.style.display = zoomed ? 'inline' : 'none';
    svg.setAttribute('data-zoomed', zoomed ? String(frames.indexOf(z)) : '');
  }

  // The union of the matched frames' ranges: a match inside another match
  // is not counted twice.
  function coveredWidth(ranges) {
    ranges.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0;
    var end = -Infinity;
    ranges.forEach(function (r) {
      if (r[1] > end) { covered += r[1] - Math.max(r[0], end); end = r[1]; }
    });
    return covered;
  }

  function search(pattern) {
    lastSearch = pattern || '';
    var re = null;
    try {
      re = lastSearch ? new RegExp(lastSearch) : null;
    } catch (error) {
      matched.textContent = 'Bad regular expression: ' + error.message;
      return;
    }
    var ranges = [];
    frames.forEach(function (f) {
      var hit = re !== null && !f.merged && re.test(f.name);
      f.rect.setAttribute('fill', hit ? matchFill : f.fill);
      f.g.classList.toggle('match', hit);
      if (hit) ranges.push([f.x, f.x + f.w]);
    });
    var part = coveredWidth(ranges) / fullWidth;
    matched.textContent = re === null ? '' :
        'Matched: ' + human(part * total) + ' (' + (100 * part).toFixed(1) + '%)';
    svg.setAttribute('data-matched-frames', String(ranges.length));
  }

  function askSearch() {
    var pattern = window.prompt('Search frames (regular expression):', lastSearch);
    if (pattern !== null) search(pattern);
  }

  function onHover(event) {
    var f = frameOf(event);
    if (!f) return;
    var text = f.name + ': ' + human(f.value) + ', ' + share(f.value, total) + ' of all';
    if (zoomed) text += ', ' + share(f.value, zoomed.value) + ' of the zoomed frame';
    details.textContent = text;
  }

  function onKey(event) {
    if ((event.ctrlKey || event.metaKey) && (event.key === 'f' || event.key === 'F')) {
      event.preventDefault();
      askSearch();
    } else if (event.key === '/') {
      event.preventDefault();
      askSearch();
    } else if (event.key === 'Escape') {
      search('');
      zoom(frames[0]);
    }
  }

  function applyFragment() {
    var params = {};
    window.location.hash.replace(/^#/, '').split('&').forEach(function (pair) {
      var at = pair.indexOf('=');
      if (at > 0) params[pair.substring(0, at)] = decodeURIComponent(pair.substring(at + 1));
    });
    var index = parseInt(params.zoom, 10);
    if (index >= 0 && index < frames.length) zoom(frames[index]);
    if (params.search) search(params.search);
  }

  function init() {
    readFrames();
    if (frames.length === 0) return;
    var layer = document.getElementById('frames');
    layer.addEventListener('mouseover', onHover);
    layer.addEventListener('mouseout', function () { details.textContent = defaultDetails; });
    layer.addEventListener('click', function (event) {
      var f = frameOf(event);
      if (f) zoom(f);
    });
    resetButton.addEventListener('click', function () { zoom(frames[0]); });
    document.getElementById('search').addEventListener('click', askSearch);
    document.addEventListener('keydown', onKey);
    applyFragment();
    svg.setAttribute('data-flamegraph-ready', String(frames.length));
  }

  init();
})();
)js";

// ES5 like the first script, and like it no globals: it finds the frames
// through the DOM the first one left.
constexpr std::string_view kDiffScript = R"js(
(function () {
  'use strict';
  var svg = document.documentElement;
  var layer = document.getElementById('frames');
  var details = document.getElementById('details');
  if (!layer || !details) return;

  function detailOf(g) {
    var lines = g.querySelector('title').textContent.split('\n');
    return lines[0] + ': ' + (lines[1] || '');
  }

  layer.addEventListener('mouseover', function (event) {
    var g = event.target.closest ? event.target.closest('g.f') : null;
    if (g) details.textContent = detailOf(g);
  });
  svg.setAttribute('data-diff-grew', String(layer.querySelectorAll('g.grew').length));
  svg.setAttribute('data-diff-shrank', String(layer.querySelectorAll('g.shrank').length));
  svg.setAttribute('data-diff-ready', String(layer.querySelectorAll('g.f').length));
})();
)js";

}  // namespace

std::string_view FlameGraphStyle() { return kStyle; }

std::string_view FlameGraphDiffScript() { return kDiffScript; }

std::string_view FlameGraphScript() { return kScript; }

}  // namespace memprof::report::render

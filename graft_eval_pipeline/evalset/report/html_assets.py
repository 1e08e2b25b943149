"""The inline style and script of report.html (and the style the compare page shares).

The script reads the cases from the JSON block `case-data` (case_data.py) and renders one page of
the table at a time: the filters (one kind, one tag, a search over id, tag, rule and kind) combine
and run over arrays, so a click at 20,000 cases costs a pass over the rows and 100 table rows of
DOM. The page's state is in the address: `#case=<id>` opens that case's panel, `#under` one kind,
`#kind=under&tag=docs&q=ci` a combination. Every value enters the page as text
(`textContent`), never as markup, so nothing in a report can inject any.

Colours have one meaning across the page: red is a failure (under-classified, a failing
threshold, a point beyond its threshold), amber over-classified or a warning, blue neutral data,
violet a change of prompt or engine; a class is told by its name (sensitive in bold), not by a
colour.
"""

from __future__ import annotations

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:16px 24px;color:#111}
h1{font-size:22px;margin:4px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:16px 0 6px}
code{font:12px ui-monospace,monospace}.meta{color:#555}nav a,a{color:#1f569e}
.badge{display:inline-block;padding:3px 10px;border-radius:12px;margin-right:8px;font-weight:600}
.pass{background:#e6f4ea;color:#1e6b34}.fail{background:#fdecea;color:#b3261e}.warn{background:#fff4e5;color:#8a5300}
.na{background:#eee;color:#444}.warn-text{color:#8a5300}
.scripted{display:inline-block;font-size:10px;font-weight:600;letter-spacing:.02em;padding:0 5px;
border-radius:6px;background:#ece8f6;color:#4a3d7a;vertical-align:middle;margin-left:4px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:10px}
.card{border:1px solid #ddd;border-radius:8px;padding:8px 10px;background:#fafafa}
.card.fail{border-color:#b3261e}.card.pass{border-color:#8cc79b}
.card .label{font-size:12px;color:#444}.card .value{font-size:22px;font-weight:600}
.card .count,.card .base,.card .interval{font-size:12px;color:#555}
table{border-collapse:collapse;font-size:13px}
th,td{border-bottom:1px solid #eee;padding:4px 8px;text-align:left;vertical-align:top}
th button{font:inherit;font-weight:600;background:none;border:0;padding:0;cursor:pointer}
th[aria-sort=ascending] button::after{content:" ▲"}th[aria-sort=descending] button::after{content:" ▼"}
tr.fail td{color:#b3261e}.num{text-align:right}.scroll{overflow-x:auto}
tr.case{cursor:pointer}tr.case:hover td{background:#f5f8fd}tr.case.selected td{background:#e8eefc}
.filters button,.pager button{margin:0 6px 6px 0;padding:4px 10px;border:1px solid #bbb;border-radius:14px;
background:#fff;cursor:pointer}
.filters button[aria-pressed=true]{background:#1f569e;color:#fff;border-color:#1f569e}
.pager button[disabled]{opacity:.4;cursor:default}
.tools{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:4px 0 8px}
.tools input[type=search]{width:280px;padding:4px 8px}
.kind{display:inline-block;font-size:11px;padding:1px 6px;border-radius:8px;margin:1px;background:#eee}
.kind.under{background:#fdecea;color:#b3261e}.kind.over{background:#fff4e5;color:#8a5300}
.kind.unavailable{background:#ececec}.kind.flagged{background:#e8eefc;color:#1f569e}.kind.changed{background:#f3e8fd}
.cls-2{font-weight:700}#case-table td:first-child{white-space:nowrap}
.cases-wrap{display:flex;gap:18px;align-items:flex-start}.cases-wrap .scroll{flex:1 1 auto;min-width:0}
#case-panel{flex:0 0 380px;border:1px solid #c9d6ea;border-radius:8px;padding:10px 14px;background:#fbfcfe;
position:sticky;top:8px;max-height:92vh;overflow:auto}
#case-panel h3{margin:4px 0 6px;font-size:15px}#case-panel dl{display:grid;grid-template-columns:120px 1fr;
gap:2px 10px;margin:4px 0 10px}#case-panel dt{color:#555}#case-panel dd{margin:0}
#case-panel h4{margin:10px 0 2px;font-size:13px;border-bottom:1px solid #e3e8f0}
#case-panel ul{margin:2px 0 6px;padding-left:18px}#case-panel .close{float:right}
.figures{display:flex;flex-wrap:wrap;gap:18px}figure{margin:0}figcaption{font-size:12px;color:#444}
figure[data-confusion]{max-width:320px}
.legend{font-size:12px;color:#444}
.legend i{display:inline-block;width:14px;height:8px;margin:0 4px 0 10px;vertical-align:middle}
footer{margin:32px 0 8px;color:#777;font-size:12px}
dl.pairs{display:grid;grid-template-columns:110px 1fr;gap:2px 10px;margin:4px 0}dl.pairs dd{margin:0}
dl.pairs dt{color:#555}section.group table{margin-bottom:6px}
.side{display:grid;grid-template-columns:1fr 1fr;gap:14px}.side > div{border:1px solid #ddd;border-radius:8px;
padding:8px 12px}
"""

SCRIPT = r"""
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('case-data').textContent);
  var C = {};
  D.cols.forEach(function (name, i) { C[name] = i; });
  var ROWS = D.rows, N = ROWS.length, PAGE = D.pageSize;
  var kindIds = D.kinds.map(function (k) { return k.id; });
  var hay = new Array(N), failing = new Uint8Array(N), kindSets = new Array(N);
  ROWS.forEach(function (r, i) {
    var words = [r[C.id]];
    var mine = {};
    r[C.kinds].forEach(function (k) {
      words.push(kindIds[k]); mine[kindIds[k]] = true;
      if (D.kinds[k].failure) failing[i] = 1;
    });
    r[C.tags].forEach(function (t) { words.push(D.tags[t]); });
    r[C.rules].forEach(function (x) { words.push(D.rules[x]); });
    hay[i] = words.join(' ').toLowerCase();
    kindSets[i] = mine;
  });
  var state = {kind: D.defaultFilter, tag: -1, q: '', page: 0, sort: null, dir: 1, open: null};
  var order = [];
  for (var i = 0; i < N; i++) order.push(i);
  var shown = [];
  var $ = function (id) { return document.getElementById(id); };
  var table = $('case-table'), body = table.tBodies[0];
  var buttons = Array.prototype.slice.call(document.querySelectorAll('.filters button[data-filter]'));
  var tagSelect = $('case-tag'), search = $('case-search'), panel = $('case-panel');

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function cls(value) { return value === null || value === undefined ? '-' : D.classes[value]; }
  function names(list, table) { return list.map(function (x) { return table[x]; }); }
  function kindText(r, k) {
    var id = kindIds[k];
    return id === 'under' && r[C.severe] ? 'severe under' : id;
  }
  function cost(r) {
    if (D.scripted) return 'scripted';
    return r[C.cost] === null ? 'n/a' : r[C.cost].toFixed(6);
  }
  function matches(i) {
    var k = state.kind;
    if (k === 'failures' && !failing[i]) return false;
    if (k !== 'all' && k !== 'failures' && !kindSets[i][k]) return false;
    if (state.tag >= 0 && ROWS[i][C.tags].indexOf(state.tag) < 0) return false;
    if (state.q && hay[i].indexOf(state.q) < 0) return false;
    return true;
  }
  function classCell(value) {
    var td = el('td', cls(value));
    if (value !== null && value !== undefined) td.className = 'cls-' + value;
    return td;
  }
  function rowNode(i) {
    var r = ROWS[i], tr = el('tr', null, 'case');
    tr.dataset.index = i; tr.dataset.kinds = names(r[C.kinds], kindIds).join(' ');
    if (state.open === i) tr.classList.add('selected');
    var first = el('td'), link = el('a');
    link.href = '#case=' + encodeURIComponent(r[C.id]);
    link.appendChild(el('code', r[C.id]));
    first.appendChild(link);
    tr.appendChild(first);
    var why = el('td');
    r[C.kinds].forEach(function (k) { why.appendChild(el('span', kindText(r, k), 'kind ' + kindIds[k])); });
    if (!r[C.kinds].length) why.textContent = '-';
    tr.appendChild(why);
    tr.appendChild(classCell(r[C.gold]));
    tr.appendChild(classCell(r[C.floor]));
    tr.appendChild(classCell(r[C.model]));
    tr.appendChild(classCell(r[C.final]));
    tr.appendChild(el('td', D.statuses[r[C.status]]));
    tr.appendChild(el('td', r[C.vstatus] || '-'));
    tr.appendChild(el('td', names(r[C.rules], D.rules).join(', ') || '-'));
    tr.appendChild(el('td', names(r[C.raised], D.raised).join(', ') || '-'));
    tr.appendChild(el('td', names(r[C.tags], D.tags).join(', ') || '-'));
    tr.appendChild(el('td', r[C.calls], 'num'));
    tr.appendChild(el('td', r[C.inTokens] + r[C.outTokens], 'num'));
    tr.appendChild(el('td', cost(r), 'num'));
    return tr;
  }
  function render() {
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    var start = state.page * PAGE, end = Math.min(shown.length, start + PAGE);
    var frag = document.createDocumentFragment();
    for (var j = start; j < end; j++) frag.appendChild(rowNode(shown[j]));
    body.replaceChildren(frag);
    $('shown').textContent = shown.length + ' of ' + N + ' cases shown';
    $('page-info').textContent = shown.length ? 'rows ' + (start + 1) + '–' + end + ', page ' +
      (state.page + 1) + ' of ' + pages : 'no case matches';
    $('page-prev').disabled = state.page === 0;
    $('page-next').disabled = state.page >= pages - 1;
    buttons.forEach(function (b) {
      b.setAttribute('aria-pressed', String(b.dataset.filter === state.kind));
    });
  }
  function refilter() {
    shown = [];
    for (var j = 0; j < N; j++) { if (matches(order[j])) shown.push(order[j]); }
    render();
  }
  function filterHash() {
    var parts = [];
    if (state.kind !== D.defaultFilter || state.tag >= 0 || state.q) {
      parts.push('kind=' + encodeURIComponent(state.kind));
    }
    if (state.tag >= 0) parts.push('tag=' + encodeURIComponent(D.tags[state.tag]));
    if (state.q) parts.push('q=' + encodeURIComponent(state.q));
    return parts.length ? '#' + parts.join('&') : '';
  }
  function setHash(hash) {
    try {
      history.replaceState(null, '', hash || location.pathname + location.search);
    } catch (e) { /* some file: URLs refuse it */ }
  }

  function panelSection(title, pairs) {
    var frag = document.createDocumentFragment();
    frag.appendChild(el('h4', title));
    var dl = el('dl');
    pairs.forEach(function (p) {
      if (p === null) return;
      dl.appendChild(el('dt', p[0]));
      var dd = el('dd');
      if (Array.isArray(p[1])) {
        if (!p[1].length) dd.textContent = 'none';
        else {
          var ul = el('ul');
          p[1].forEach(function (x) { ul.appendChild(el('li', x)); });
          dd.appendChild(ul);
        }
      } else dd.textContent = p[1] === null || p[1] === undefined || p[1] === '' ? '-' : String(p[1]);
      dl.appendChild(dd);
    });
    frag.appendChild(dl);
    return frag;
  }
  function openCase(i) {
    state.open = i;
    var r = ROWS[i], f = r[C.facts], c = D.content[r[C.id]] || null;
    var box = $('case-panel-body');
    box.replaceChildren();
    var head = el('h3'); head.appendChild(el('code', r[C.id])); box.appendChild(head);
    var chips = el('p');
    r[C.kinds].forEach(function (k) { chips.appendChild(el('span', kindText(r, k), 'kind ' + kindIds[k])); });
    if (!r[C.kinds].length) chips.textContent = 'nothing to look at';
    box.appendChild(chips);
    if (c) box.appendChild(el('p', 'PR title: ' + c.title, 'title'));
    var tokens = r[C.inTokens] + ' in, ' + r[C.outTokens] + ' out' + (D.scripted ? ' (scripted)' : '');
    var goldOos = r[C.goldOos] === null ? '-' : r[C.goldOos] + ' file(s)';
    var gold = [
      ['class', cls(r[C.gold])],
      ['out of scope', c && c.goldOutOfScope.length ? c.goldOutOfScope : goldOos],
      ['should flag', r[C.goldFlag] === null ? '-' : (r[C.goldFlag] ? 'yes' : 'no')]
    ];
    box.appendChild(panelSection('Gold', r[C.gold] === null ? [['class', 'no gold label']] : gold));
    var rules = names(r[C.rules], D.rules).map(function (x) {
      var by = c && c.firedBy[x];
      return by ? x + ': ' + by : x;
    });
    box.appendChild(panelSection('Floor', [['class', cls(r[C.floor])], ['rules fired', rules]]));
    var writer = [['class', cls(r[C.writer])]];
    if (f) {
      writer.push(['first pass', f[1] ? cls(f[0]) + ' (fast model), escalated to the strong model' :
        (r[C.writer] === null ? '-' : 'no escalation')]);
    } else writer.push(['first pass', 'not kept for this run']);
    box.appendChild(panelSection('Writer', writer));
    var verifier = [['status', r[C.vstatus] || '-'], ['class', cls(r[C.verifier])]];
    if (f) {
      verifier.push(['claims', f[2].map(function (x) { return x[0] + ' ' + x[1]; })]);
      verifier.push(['unexplained files', c && c.unexplained.length ? c.unexplained : String(f[3])]);
      verifier.push(['missing changes', String(f[4])]);
    } else verifier.push(['claims', 'not kept for this run']);
    box.appendChild(panelSection('Verifier', verifier));
    var oos = r[C.oos];
    box.appendChild(panelSection('Final', [
      ['class', cls(r[C.final])],
      ['status', D.statuses[r[C.status]]],
      ['raised by', names(r[C.raised], D.raised)],
      ['instructions in data',
        r[C.iid] ? 'yes' + (f && f[5].length ? ' (' + f[5].join(', ') + ')' : '') : 'no'],
      ['out-of-scope files', oos ? oos[0] + ' found, ' + oos[1] + ' extra, ' + oos[2] + ' missed' : '-'],
      ['flag', r[C.flag]],
      ['tags', names(r[C.tags], D.tags)]
    ]));
    box.appendChild(panelSection('Usage', [
      ['calls', r[C.calls] + (D.scripted ? ' (scripted)' : '')], ['tokens', tokens], ['cost', cost(r)]
    ]));
    if (c) {
      box.appendChild(panelSection('Card', [
        ['goal', c.goal === null ? 'no card' : c.goal],
        ['behaviour changes', c.changes.map(function (x, n) { return 'b' + (n + 1) + '. ' + x; })],
        ['out of scope', c.outOfScope],
        ['risk reason', c.riskReason]
      ]));
    }
    panel.hidden = false;
    Array.prototype.forEach.call(body.rows, function (tr) {
      tr.classList.toggle('selected', Number(tr.dataset.index) === i);
    });
  }
  function closeCase() {
    state.open = null; panel.hidden = true;
    Array.prototype.forEach.call(body.rows, function (tr) { tr.classList.remove('selected'); });
  }
  var byId = {};
  ROWS.forEach(function (r, i) { byId[r[C.id]] = i; });

  function fromHash() {
    var raw = location.hash.slice(1);
    if (!raw) return false;
    var params = {};
    raw.split('&').forEach(function (part) {
      var eq = part.indexOf('=');
      if (eq < 0) params.kind = decodeURIComponent(part);
      else params[part.slice(0, eq)] = decodeURIComponent(part.slice(eq + 1));
    });
    var known = buttons.some(function (b) { return b.dataset.filter === params.kind; });
    /* a link with filters names all of them: what it leaves out is the default */
    if (params.kind !== undefined || params.tag !== undefined || params.q !== undefined) {
      state.kind = known ? params.kind : D.defaultFilter;
      state.tag = params.tag !== undefined ? D.tags.indexOf(params.tag) : -1;
      state.q = (params.q || '').toLowerCase();
      search.value = params.q || '';
      tagSelect.value = state.tag < 0 ? '' : String(state.tag);
      state.page = 0;
      refilter();
    }
    if (params['case'] !== undefined) {
      var i = byId[params['case']];
      if (i !== undefined) { openCase(i); panel.scrollIntoView({block: 'nearest'}); }
    }
    return true;
  }

  buttons.forEach(function (b) {
    b.addEventListener('click', function () {
      state.kind = b.dataset.filter; state.page = 0; refilter(); setHash(filterHash());
    });
  });
  tagSelect.addEventListener('change', function () {
    state.tag = tagSelect.value === '' ? -1 : Number(tagSelect.value);
    state.page = 0; refilter(); setHash(filterHash());
  });
  search.addEventListener('input', function () {
    state.q = search.value.trim().toLowerCase(); state.page = 0; refilter(); setHash(filterHash());
  });
  $('page-prev').addEventListener('click', function () { state.page--; render(); });
  $('page-next').addEventListener('click', function () { state.page++; render(); });
  $('case-panel-close').addEventListener('click', function () { closeCase(); setHash(filterHash()); });
  body.addEventListener('click', function (e) {
    var tr = e.target.closest('tr.case');
    if (!tr) return;
    if (e.target.closest('a')) return;  /* the link sets #case=<id>: hashchange opens it */
    var id = ROWS[Number(tr.dataset.index)][C.id];
    location.hash = 'case=' + encodeURIComponent(id);
  });
  window.addEventListener('hashchange', fromHash);

  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  heads.forEach(function (th) {
    th.querySelector('button').addEventListener('click', function () {
      var key = th.dataset.key;
      var dir = state.sort === key && state.dir === 1 ? -1 : 1;
      state.sort = key; state.dir = dir;
      heads.forEach(function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
      var value;
      if (key === 'id') value = function (r) { return r[C.id]; };
      else if (key === 'kinds') value = function (r) { return names(r[C.kinds], kindIds).join(' '); };
      else if (key === 'tokens') value = function (r) { return r[C.inTokens] + r[C.outTokens]; };
      else if (key === 'status') value = function (r) { return D.statuses[r[C.status]]; };
      else if (key === 'rules') value = function (r) { return names(r[C.rules], D.rules).join(', '); };
      else if (key === 'raised') value = function (r) { return names(r[C.raised], D.raised).join(', '); };
      else if (key === 'tags') value = function (r) { return names(r[C.tags], D.tags).join(', '); };
      else value = function (r) { var v = r[C[key]]; return v === null || v === undefined ? -1 : v; };
      var keys = ROWS.map(value);
      order.sort(function (a, b) {
        var x = keys[a], y = keys[b];
        var c = typeof x === 'number' && typeof y === 'number' ? x - y : (x < y ? -1 : x > y ? 1 : 0);
        return (c || a - b) * dir;
      });
      refilter();
    });
  });
  refilter();
  fromHash();
  document.body.dataset.ready = 'true';
})();
"""

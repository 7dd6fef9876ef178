// ordo's translation page: plain JavaScript on the server's own API (same origin, no library).
//   GET /frontend/settings, /languages    limits and pickers (LibreTranslate's routes)
//   POST /translate                        the translation shown, "auto" detection
//   POST /translate_file, GET /download_file  the documents tab (any file format the server lists)
//   POST /v1/translate alignment, attention  the words view and the heatmap; with terms in the
//                                            glossary box, also the translation shown ("glossary")
//   GET /v1/models, POST /v1/summarize      the summarization tab
//   POST /v1/audio/transcriptions, /v1/audio/translations  the speech tab (OpenAI's routes):
//                                            a file or a recording (MediaRecorder) becomes text
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const KEY_STORE = 'ordo-api-key';
  const state = {
    settings: { charLimit: 10000, frontendTimeout: 500, keyRequired: false, maxTexts: 256 },
    languages: [],   // [{code, name, targets}]
    detected: null,  // the language "auto" found for the last translation
    seq: 0,          // the newest translation asked for; older answers are dropped
    controller: null,
    last: null,      // {text, source, target, glossary, translated, v1} of the translation shown
    attention: null, // the /v1 result with "attention", for the heatmap
    marked: null,    // {target: word, sources: Set of words} marked in the words view
  };

  // ---------------------------------------------------------------- the API
  function apiKey() {
    try { return sessionStorage.getItem(KEY_STORE) || ''; } catch (e) { return ''; }
  }

  class ApiError extends Error {
    constructor(status, message, retryAfter) {
      super(message);
      this.status = status;
      this.retryAfter = retryAfter;
    }
  }

  // The ApiError of a failed answer: the server's message, as LibreTranslate's routes give it
  // ({"error": "..."}) or OpenAI's audio routes ({"error": {"message": "..."}}).
  async function failure(response) {
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    const error = data && data.error;
    const message = typeof error === 'string' ? error
      : error && typeof error.message === 'string' ? error.message : response.statusText;
    return new ApiError(response.status, message, response.headers.get('Retry-After'));
  }

  // A multipart upload (FormData) to `path`, with the key; the answer, or a thrown ApiError.
  async function postForm(path, form) {
    const headers = { Accept: 'application/json' };
    const key = apiKey();
    if (key) headers.Authorization = 'Bearer ' + key;
    let response;
    try {
      response = await fetch(path, { method: 'POST', headers, body: form });
    } catch (e) {
      throw new ApiError(0, 'The server cannot be reached (' + e.message + ').');
    }
    if (!response.ok) throw await failure(response);
    return response;
  }

  async function api(method, path, body, signal) {
    const headers = { Accept: 'application/json' };
    const key = apiKey();
    if (key) headers.Authorization = 'Bearer ' + key;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(path, {
        method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      throw new ApiError(0, 'The server cannot be reached (' + e.message + ').');
    }
    if (!response.ok) throw await failure(response);
    try { return await response.json(); } catch (e) { return null; }
  }

  // What the page says about a failed request: the server's own message, with what to do.
  function explain(error) {
    if (!(error instanceof ApiError)) return String(error && error.message ? error.message : error);
    const s = error.status;
    const retry = error.retryAfter ? ' Try again in ' + error.retryAfter + ' s.' : '';
    if (s === 0) return error.message;
    if (s === 403) return 'Refused (403): ' + error.message + '. Enter a valid API key.';
    if (s === 413) return 'Too large (413): ' + error.message + '.';
    if (s === 429) return 'Too many requests (429): ' + error.message + '.' + retry;
    if (s === 503) return 'The server is busy or not ready (503): ' + error.message + '.' + retry;
    if (s === 504) return 'The server took too long (504): ' + error.message + '. Try a shorter text.';
    if (s >= 400 && s < 500) return 'The server refused the request (' + s + '): ' + error.message;
    return 'The server failed (' + s + '): ' + error.message;
  }

  function showError(error) {
    const box = $('error');
    if (!error) {
      box.hidden = true;
      box.textContent = '';
      return;
    }
    box.textContent = explain(error);
    box.hidden = false;
    if (error instanceof ApiError && error.status === 403) showKeyForm(true);
  }

  // ---------------------------------------------------------------- API keys
  function showKeyForm(refused) {
    const form = $('key-form');
    form.hidden = false;
    $('key-why').textContent = refused && apiKey()
      ? 'The server refused this API key. Enter another one (kept in this browser tab only).'
      : 'This server needs an API key. It is kept in this browser tab only (sessionStorage).';
  }

  $('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('api-key').value.trim();
    if (!key) return;
    try { sessionStorage.setItem(KEY_STORE, key); } catch (e) { /* private mode: this page only */ }
    $('api-key').value = '';
    $('key-form').hidden = true;
    showError(null);
    loadModels();
    if ($('text').value.trim()) translateNow();
  });

  // ---------------------------------------------------------------- languages
  function languageName(code) {
    if (code === 'auto') return 'Detect language';
    const found = state.languages.find((l) => l.code === code);
    return found ? found.name : code;
  }

  function option(value, label) {
    const o = document.createElement('option');
    o.value = value;
    o.textContent = label;
    return o;
  }

  function fillSources(selected) {
    const select = $('source');
    select.replaceChildren(option('auto', 'Detect language'));
    for (const l of state.languages) if (l.targets.length) select.append(option(l.code, l.name));
    if ([...select.options].some((o) => o.value === selected)) select.value = selected;
  }

  function targetsOf(source) {
    if (source === 'auto') {
      const all = new Set();
      for (const l of state.languages) for (const t of l.targets) all.add(t);
      return [...all];
    }
    const found = state.languages.find((l) => l.code === source);
    return found ? found.targets : [];
  }

  function fillTargets(selected) {
    const select = $('target');
    const previous = selected || select.value;
    select.replaceChildren();
    for (const code of targetsOf($('source').value)) select.append(option(code, languageName(code)));
    if ([...select.options].some((o) => o.value === previous)) select.value = previous;
  }

  $('source').addEventListener('change', () => {
    fillTargets();
    translateSoon(0);
  });
  $('target').addEventListener('change', () => translateSoon(0));

  $('swap').addEventListener('click', () => {
    let source = $('source').value;
    if (source === 'auto') source = state.detected;
    const target = $('target').value;
    if (!source || !target) {
      $('status').textContent = 'Translate something first: the detected language is not known yet.';
      return;
    }
    // The translation becomes the text to translate back.
    if (state.last && state.last.translated && $('result').textContent === state.last.translated) {
      $('text').value = state.last.translated;
    }
    fillSources(target);
    if ($('source').value !== target) return showError(new Error(languageName(target) + ' cannot be translated from here.'));
    fillTargets(source);
    updateCount();
    translateSoon(0);
  });

  // ---------------------------------------------------------------- translating
  function length(text) { return [...text].length; }  // characters (code points), as the server counts

  function updateCount() {
    const n = length($('text').value);
    const limit = state.settings.charLimit;
    const count = $('count');
    count.textContent = n + ' / ' + limit;
    count.classList.toggle('over', n > limit);
    count.title = n > limit ? 'Longer than this server\'s limit of ' + limit + ' characters' : '';
    $('translate').disabled = n > limit;
    const s = length($('summary-text').value);
    $('summary-count').textContent = s + ' / ' + limit;
    $('summary-count').classList.toggle('over', s > limit);
  }

  let timer = null;
  function translateSoon(delay) {
    clearTimeout(timer);
    timer = setTimeout(translateNow, delay === undefined ? state.settings.frontendTimeout : delay);
  }

  $('text').addEventListener('input', () => {
    updateCount();
    translateSoon();
  });
  $('text').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      translateNow();
    }
  });
  $('glossary').addEventListener('input', () => translateSoon());
  $('translate').addEventListener('click', () => translateNow());
  $('clear').addEventListener('click', () => {
    $('text').value = '';
    updateCount();
    showResult('', null);
    showError(null);
    $('text').focus();
  });

  function setBusy(busy, text) {
    $('result').setAttribute('aria-busy', busy ? 'true' : 'false');
    $('status').textContent = text || '';
  }

  // ---------------------------------------------------------------- glossary
  // The glossary box: TSV lines "source term<TAB>target term", as two spreadsheet columns paste;
  // blank lines are skipped and terms trimmed (as the server trims them). The terms as
  // /v1/translate's "glossary" object, or null when the box holds none; a bad line throws,
  // naming it, and then nothing is sent.
  function readGlossary(value) {
    const terms = new Map();  // source term -> {target, line}
    value.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      const where = 'glossary line ' + (i + 1) + ': ';
      const expected = where + "expected 'source term<TAB>target term'";
      const cells = line.split('\t');
      if (cells.length === 1) throw new Error(expected + ', found no tab');
      if (cells.length > 2) throw new Error(expected + ', found ' + (cells.length - 1) + ' tabs');
      const source = cells[0].trim(), target = cells[1].trim();
      if (!source) throw new Error(expected + ', the source term is empty');
      if (!target) throw new Error(expected + ', the target term is empty');
      if (terms.has(source)) throw new Error(where + "'" + source + "' is already on line " + terms.get(source).line);
      terms.set(source, { target, line: i + 1 });
    });
    // fromEntries: a term such as "__proto__" stays a term.
    return terms.size ? Object.fromEntries([...terms].map(([source, t]) => [source, t.target])) : null;
  }

  // Reads the box, says how many terms it holds or what is wrong with it: {terms, error}.
  function checkGlossary() {
    const box = $('glossary'), message = $('glossary-error');
    let terms = null, error = null;
    try { terms = readGlossary(box.value); } catch (e) { error = e; }
    const n = terms ? Object.keys(terms).length : 0;
    $('glossary-count').textContent = error ? '(not read)' : n ? '(' + n + (n === 1 ? ' term)' : ' terms)') : '';
    message.textContent = error ? error.message : '';
    message.hidden = !error;
    if (error) {
      box.setAttribute('aria-invalid', 'true');
      $('glossary-box').open = true;
    } else {
      box.removeAttribute('aria-invalid');
    }
    return { terms, error };
  }

  // POST /v1/translate for the Text tab: the words view, the heatmap and, with terms, the
  // translation. The glossary goes with each, so that they all show the same translation.
  function v1Translate(text, source, target, glossary, fields, signal) {
    const body = Object.assign({ text, source_lang: source, target_lang: target }, fields);
    if (glossary) body.glossary = glossary;
    return api('POST', '/v1/translate', body, signal);
  }

  async function translateNow() {
    clearTimeout(timer);
    const text = $('text').value;
    const source = $('source').value, target = $('target').value;
    const seq = ++state.seq;
    if (state.controller) state.controller.abort();
    const glossary = checkGlossary();
    if (glossary.error) {  // said in the glossary box; nothing is sent
      showResult('', null);
      showError(null);
      setBusy(false);
      return;
    }
    if (!text.trim()) {
      showResult('', null);
      showError(null);
      setBusy(false);
      return;
    }
    if (length(text) > state.settings.charLimit) {
      showError(new Error('The text has ' + length(text) + ' characters; this server translates at most ' +
        state.settings.charLimit + ' at once.'));
      return;
    }
    if (!target) return;
    const controller = new AbortController();
    state.controller = controller;
    setBusy(true, 'Translating…');
    const started = performance.now();
    try {
      let from = source, detected = null, translated = '';
      // /translate: the translation without a glossary, and the language "auto" finds (with a
      // glossary too: the server's own detection, its refusals included, as without one).
      if (!glossary.terms || source === 'auto') {
        const answer = await api('POST', '/translate', { q: text, source, target, format: 'text' }, controller.signal);
        if (seq !== state.seq) return;
        if (answer.detectedLanguage && answer.detectedLanguage.language) {
          detected = answer.detectedLanguage;
          from = detected.language;
        }
        translated = answer.translatedText;
      }
      // /translate ignores a glossary: /v1/translate puts the terms in, from the language chosen
      // or detected, each line of the text one input (as `ordo translate --glossary` reads lines).
      if (glossary.terms) {
        const answer = await v1Translate(text.split('\n'), from, target, glossary.terms, {}, controller.signal);
        if (seq !== state.seq) return;
        translated = answer.results.map((r) => r.text).join('\n');
      }
      showError(null);
      if (detected) state.detected = from;
      showDetected(source === 'auto' ? detected : null);
      showResult(translated, { text, source: from, target, glossary: glossary.terms });
      const n = glossary.terms ? Object.keys(glossary.terms).length : 0;
      setBusy(false, 'Translated in ' + Math.round(performance.now() - started) + ' ms' +
        (n ? ' with ' + n + (n === 1 ? ' glossary term' : ' glossary terms') : ''));
      await loadAlignment(seq, text, from, target, glossary.terms, translated, controller.signal);
    } catch (error) {
      if (error.name === 'AbortError' || seq !== state.seq) return;
      setBusy(false, '');
      showError(error);
    }
  }

  function showDetected(detected) {
    const box = $('detected');
    if (!detected) {
      box.hidden = true;
      box.textContent = '';
      return;
    }
    box.textContent = 'Detected: ' + languageName(detected.language) + ' (' + detected.language + ')' +
      (typeof detected.confidence === 'number' ? ', confidence ' + Math.round(detected.confidence) + ' %' : '');
    box.dataset.language = detected.language;
    box.hidden = false;
  }

  function showResult(translated, request) {
    $('result').textContent = translated;
    $('copy').disabled = !translated;
    state.last = request ? Object.assign({ translated }, request) : null;
    state.attention = null;
    if (!translated) {
      $('attention').hidden = true;
      $('status').textContent = '';
    }
  }

  $('copy').addEventListener('click', async () => {
    const text = $('result').textContent;
    try {
      await navigator.clipboard.writeText(text);
    } catch (e) {
      // Without the asynchronous clipboard (a page not on https or localhost): select and copy.
      const area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.className = 'offscreen';
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    $('status').textContent = 'Copied';
  });

  // ---------------------------------------------------------------- attention view
  // Word number of each piece, as ordo::word_indices (include/ordo/alignment.h) counts them:
  // a piece starting with "▁" starts a word, as does the piece after one ending in "</w>".
  function wordIndices(pieces) {
    const out = [];
    let word = -1;
    let previousEnds = true;
    pieces.forEach((piece, i) => {
      if (i === 0 || piece.startsWith('\u2581') || previousEnds) word += 1;
      previousEnds = piece.endsWith('</w>');
      out.push(Math.max(word, 0));
    });
    return out;
  }

  function words(pieces) {
    const index = wordIndices(pieces);
    const out = [];
    pieces.forEach((piece, i) => {
      const clean = piece.replace(/\u2581/g, '').replace(/<\/w>$/, '').replace(/@@$/, '');
      out[index[i]] = (out[index[i]] || '') + clean;
    });
    return out;
  }

  async function loadAlignment(seq, text, source, target, glossary, translated, signal) {
    let answer;
    try {
      answer = await v1Translate(text, source, target, glossary, { alignment: 'hard', alignment_words: true }, signal);
    } catch (error) {
      if (error.name === 'AbortError' || seq !== state.seq) return;
      // The translation is shown; only the words view is missing.
      $('attention').hidden = true;
      $('status').textContent += ' (no alignment: ' + explain(error) + ')';
      return;
    }
    if (seq !== state.seq) return;
    const r = answer.results[0];
    if (!r || !r.tokens.length) return;
    const sourcePieces = r.source_text_positions.map((p) => r.source_tokens[p]);
    state.last.v1 = { model: answer.model, result: r, sourcePieces };
    drawWords(sourcePieces, r.tokens, r.alignment);
    $('attention-whole').hidden = r.text === translated;
    $('attention').hidden = false;
    if ($('heatmap-box').open) loadAttention();
  }

  function drawWords(sourcePieces, targetPieces, links) {
    state.marked = null;
    const sourceWords = words(sourcePieces), targetWords = words(targetPieces);
    const linked = targetWords.map(() => new Set());
    for (const [s, t] of links) if (linked[t]) linked[t].add(s);
    const sourceBox = $('source-words'), targetBox = $('target-words');
    sourceBox.replaceChildren();
    targetBox.replaceChildren();
    sourceWords.forEach((w, i) => {
      const span = document.createElement('span');
      span.className = 'word';
      span.textContent = w;
      span.dataset.index = i;
      sourceBox.append(span, ' ');
    });
    const mark = (t) => {
      state.marked = t === null ? null : { target: t, sources: linked[t] };
      if (state.attention && $('heatmap-box').open) drawHeatmap();
      for (const [i, span] of [...sourceBox.querySelectorAll('.word')].entries()) {
        span.classList.toggle('linked', t !== null && linked[t].has(i));
      }
      for (const span of targetBox.querySelectorAll('.word')) {
        span.classList.toggle('active', t !== null && Number(span.dataset.index) === t);
      }
      $('link-readout').textContent = t === null ? '' : '“' + targetWords[t] + '” ← ' +
        ([...linked[t]].sort((a, b) => a - b).map((s) => '“' + sourceWords[s] + '”').join(', ') || 'no source word');
    };
    targetWords.forEach((w, t) => {
      const span = document.createElement('span');
      span.className = 'word';
      span.textContent = w;
      span.dataset.index = t;
      span.tabIndex = 0;
      span.setAttribute('role', 'listitem');
      span.setAttribute('aria-label', w + ': from ' +
        ([...linked[t]].sort((a, b) => a - b).map((s) => sourceWords[s]).join(', ') || 'no source word'));
      span.addEventListener('mouseenter', () => mark(t));
      span.addEventListener('focus', () => mark(t));
      span.addEventListener('click', () => mark(t));  // a tap
      span.addEventListener('keydown', (event) => {  // arrows move between the words
        const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
        if (!step) return;
        const next = targetBox.querySelector('.word[data-index="' + (t + step) + '"]');
        if (next) next.focus();
        event.preventDefault();
      });
      targetBox.append(span, ' ');
    });
    targetBox.onmouseleave = () => { if (!targetBox.contains(document.activeElement)) mark(null); };
    targetBox.onfocusout = (event) => { if (!targetBox.contains(event.relatedTarget)) mark(null); };
  }

  // ---------------------------------------------------------------- heatmap
  $('heatmap-box').addEventListener('toggle', () => { if ($('heatmap-box').open) loadAttention(); });
  $('layer').addEventListener('change', drawHeatmap);
  $('head').addEventListener('change', drawHeatmap);

  async function loadAttention() {
    const last = state.last;
    if (!last || !last.v1) return;
    if (state.attention && state.attention.key === last) return drawHeatmap();
    $('heatmap-note').textContent = 'Loading the attention weights…';
    let answer;
    try {
      answer = await v1Translate(last.text, last.source, last.target, last.glossary, { attention: true });
    } catch (error) {
      $('heatmap-note').textContent = explain(error);
      return;
    }
    if (state.last !== last) return;
    const r = answer.results[0];
    const h = r.n_best[0];
    if (!h || !h.attention) {
      $('heatmap-note').textContent = 'This model gave no attention weights.';
      return;
    }
    state.attention = { key: last, result: r, hypothesis: h };
    const layers = h.attention.length, heads = h.attention[0].length;
    const layerSelect = $('layer'), headSelect = $('head');
    const keepLayer = layerSelect.value, keepHead = headSelect.value;
    layerSelect.replaceChildren(option('align', 'Alignment average (layer ' + (h.alignment_layer + 1) + ')'));
    for (let l = 0; l < layers; ++l) layerSelect.append(option(String(l), 'Layer ' + (l + 1) + ' of ' + layers));
    headSelect.replaceChildren(option('mean', 'Mean of ' + heads + ' heads'));
    for (let k = 0; k < heads; ++k) headSelect.append(option(String(k), 'Head ' + (k + 1)));
    if ([...layerSelect.options].some((o) => o.value === keepLayer)) layerSelect.value = keepLayer;
    if ([...headSelect.options].some((o) => o.value === keepHead)) headSelect.value = keepHead;
    drawHeatmap();
  }

  // The matrix [target][source] chosen in the page: one layer's head, or its mean of heads
  // ("alignment": the alignment layer's mean, which the words view uses).
  function chosenMatrix(h) {
    const alignment = $('layer').value === 'align';
    const layer = alignment ? h.alignment_layer : Number($('layer').value);
    $('head').disabled = alignment;
    if (alignment) $('head').value = 'mean';
    const heads = h.attention[layer];
    if (!alignment && $('head').value !== 'mean') return { matrix: heads[Number($('head').value)], layer, head: $('head').value };
    const matrix = heads[0].map((row, t) => row.map((_, s) => heads.reduce((sum, hm) => sum + hm[t][s], 0) / heads.length));
    return { matrix, layer, head: 'mean' };
  }

  function drawHeatmap() {
    const a = state.attention;
    if (!a) return;
    const { matrix, layer, head } = chosenMatrix(a.hypothesis);
    const rows = a.hypothesis.id_pieces, cols = a.result.source_tokens;
    const canvas = $('heatmap');
    const ctx = canvas.getContext('2d');
    const font = '12px system-ui, sans-serif';
    ctx.font = font;
    const labelWidth = (labels) => Math.min(140, Math.max(...labels.map((l) => ctx.measureText(l).width)) + 8);
    const left = labelWidth(rows), top = labelWidth(cols);
    const available = Math.max(200, canvas.parentElement.clientWidth - 4);
    const cell = Math.max(8, Math.min(28, Math.floor((available - left) / cols.length)));
    const width = left + cell * cols.length, height = top + cell * rows.length;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.ceil(width * ratio);
    canvas.height = Math.ceil(height * ratio);
    canvas.style.width = width + 'px';
    canvas.style.height = height + 'px';
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, width, height);
    ctx.font = font;
    ctx.fillStyle = '#1d2433';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    rows.forEach((label, t) => ctx.fillText(label, left - 4, top + cell * t + cell / 2, left - 6));
    cols.forEach((label, s) => {
      ctx.save();
      ctx.translate(left + cell * s + cell / 2, top - 4);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'left';
      ctx.fillText(label, 0, 0, top - 6);
      ctx.restore();
    });
    matrix.forEach((row, t) => row.forEach((value, s) => {
      // White (0) to deep blue (1).
      const v = Math.max(0, Math.min(1, value));
      const r = Math.round(255 - v * (255 - 20)), g = Math.round(255 - v * (255 - 60)), b = Math.round(255 - v * (255 - 160));
      ctx.fillStyle = 'rgb(' + r + ',' + g + ',' + b + ')';
      ctx.fillRect(left + cell * s, top + cell * t, cell - 1, cell - 1);
    }));
    // The marked word of the words view: its rows, and its aligned source words' columns.
    if (state.marked) {
      const targetWord = wordIndices(a.hypothesis.tokens), positions = a.hypothesis.token_positions || [];
      const sourcePositions = a.result.source_text_positions;
      const sourceWord = wordIndices(sourcePositions.map((p) => a.result.source_tokens[p]));
      ctx.lineWidth = 2;
      ctx.strokeStyle = '#d08700';
      targetWord.forEach((w, j) => {
        if (w === state.marked.target && positions[j] !== undefined) {
          ctx.strokeRect(1, top + cell * positions[j] + 1, left + cell * cols.length - 2, cell - 2);
        }
      });
      sourceWord.forEach((w, i) => {
        if (state.marked.sources.has(w)) ctx.strokeRect(left + cell * sourcePositions[i] + 1, 1, cell - 2, top + cell * rows.length - 2);
      });
    }
    const what = 'decoder layer ' + (layer + 1) + ', ' + (head === 'mean' ? 'mean of heads' : 'head ' + (Number(head) + 1));
    canvas.setAttribute('aria-label', 'Cross-attention heatmap, ' + what + ': rows are the ' + rows.length +
      ' generated pieces, columns the ' + cols.length + ' source pieces; darker is more attention.');
    $('heatmap-note').textContent = 'Rows: generated pieces; columns: source pieces; darker = more attention (' + what + ').';
  }
  window.addEventListener('resize', () => { if ($('heatmap-box').open) drawHeatmap(); });

  // ---------------------------------------------------------------- documents
  // A file goes whole to POST /translate_file (LibreTranslate's route: multipart, any format of
  // the server's supportedFilesFormat), and the translated file comes back from the URL it
  // answers, fetched here so that it downloads under "<name>.<target>.<ext>".
  async function translateFile(file, source, target) {
    const form = new FormData();
    form.append('file', file, file.name);
    form.append('source', source);
    form.append('target', target);
    const answer = await (await postForm('/translate_file', form)).json();
    // The path of the URL: the page's own origin, whatever host name the server saw.
    const download = await fetch(new URL(answer.translatedFileUrl, window.location.href).pathname);
    if (!download.ok) throw await failure(download);
    return download.blob();
  }

  function showFileFormats() {
    const formats = state.settings.supportedFilesFormat || [];
    if (!formats.length) return;
    $('file').setAttribute('accept', formats.join(','));
    $('file-formats').textContent = formats.join(' ');
  }

  $('translate-file').addEventListener('click', async () => {
    const file = $('file').files[0];
    const status = $('file-status');
    const link = $('download');
    link.hidden = true;
    if (!file) {
      status.textContent = 'Choose a file first.';
      $('file').focus();
      return;
    }
    const source = $('source').value, target = $('target').value;
    status.textContent = 'Translating ' + file.name + '…';
    $('translate-file').disabled = true;
    try {
      const blob = await translateFile(file, source, target);
      showError(null);
      const dot = file.name.lastIndexOf('.');
      const name = dot > 0 ? file.name.slice(0, dot) + '.' + target + file.name.slice(dot) : file.name + '.' + target;
      if (link.href) URL.revokeObjectURL(link.href);
      link.href = URL.createObjectURL(blob);
      link.download = name;
      link.textContent = 'Download ' + name;
      link.hidden = false;
      status.textContent = 'Translated ' + file.name + '.';
      link.focus();
    } catch (error) {
      status.textContent = '';
      showError(error);
    } finally {
      $('translate-file').disabled = false;
    }
  });

  // ---------------------------------------------------------------- summarization
  async function loadModels() {
    let answer;
    try {
      answer = await api('GET', '/v1/models');
    } catch (error) {
      return;  // without a key (403) the tab stays hidden until one is given
    }
    const summarizers = answer.models.filter((m) => m.task === 'summarize');
    const select = $('summary-model');
    select.replaceChildren(...summarizers.map((m) => option(m.name, m.name)));
    $('tab-summarize').hidden = summarizers.length === 0;
    showSpeechModels(answer.models.filter((m) => m.task === 'transcribe'));
    $('api-note').textContent = 'Models: ' + answer.models.map((m) => m.name).join(', ') + '.';
    // A server of speech models only opens on the speech tab.
    if (!state.languages.some((l) => l.targets.length) && !$('tab-speech').hidden) selectTab('speech', false);
  }

  $('summary-text').addEventListener('input', updateCount);
  $('summarize').addEventListener('click', async () => {
    const text = $('summary-text').value;
    if (!text.trim()) return $('summary-text').focus();
    $('summary').textContent = 'Summarizing…';
    try {
      const answer = await api('POST', '/v1/summarize', { model: $('summary-model').value, text });
      showError(null);
      $('summary').textContent = answer.results[0].text;
    } catch (error) {
      $('summary').textContent = '';
      showError(error);
    }
  });

  // ---------------------------------------------------------------- speech
  // A file, or a recording from the microphone (MediaRecorder: Chromium records webm/opus,
  // Safari mp4), goes whole to POST /v1/audio/transcriptions (or /translations: any language
  // into English) with response_format verbose_json; the transcript and its timed segments
  // are shown.
  const speech = { models: [], recorder: null, chunks: [], started: 0, timer: null, busy: false };

  // "de" -> "German" (the browser's own names), else the code.
  function speechLanguageName(code) {
    try {
      const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(code);
      if (name && name !== code) return name;
    } catch (e) { /* an old browser, or a code it does not know */ }
    return code;
  }

  function showSpeechModels(models) {
    speech.models = models;
    $('tab-speech').hidden = models.length === 0;
    const select = $('speech-model');
    const keep = select.value;
    select.replaceChildren(...models.map((m) => option(m.name, m.name)));
    if (models.some((m) => m.name === keep)) select.value = keep;
    $('speech-model-field').hidden = models.length < 2;
    fillSpeechLanguages();
    const s = state.settings;
    if (s.maxAudioBytes) {
      $('audio-limits').textContent = 'At most ' + Math.round(s.maxAudioBytes / 1048576) + ' MB and ' +
        clock(s.maxAudioSeconds).replace(/\.0$/, '') + ' of audio.';
    }
  }

  function fillSpeechLanguages() {
    const model = speech.models.find((m) => m.name === $('speech-model').value);
    const select = $('speech-language');
    const keep = select.value;
    const codes = model ? model.languages : [];
    const items = codes.map((c) => [c, speechLanguageName(c)]).sort((a, b) => a[1].localeCompare(b[1]));
    select.replaceChildren(option('', 'Detect language'), ...items.map(([c, n]) => option(c, n + ' (' + c + ')')));
    if (codes.includes(keep)) select.value = keep;
    const translate = $('speech-task').value === 'translate';
    // Translating takes any language (the route has no language field); English-only models do not translate.
    select.disabled = translate;
    $('speech-task').querySelector('option[value="translate"]').disabled = !!model && !model.multilingual;
  }
  $('speech-model').addEventListener('change', fillSpeechLanguages);
  $('speech-task').addEventListener('change', fillSpeechLanguages);

  // 83.25 -> "1:23.3", 4000 -> "1:06:40.0".
  function clock(seconds) {
    const tenths = Math.round(Math.max(0, seconds) * 10);
    const h = Math.floor(tenths / 36000), m = Math.floor(tenths / 600) % 60, s = (tenths % 600) / 10;
    const ss = (s < 10 ? '0' : '') + s.toFixed(1);
    return h ? h + ':' + String(m).padStart(2, '0') + ':' + ss : m + ':' + ss;
  }

  function setSpeechBusy(busy, text) {
    speech.busy = busy;
    $('transcribe-file').disabled = busy;
    $('record').disabled = busy && !speech.recorder;
    $('speech-status').textContent = text || '';
    $('speech-text').setAttribute('aria-busy', busy ? 'true' : 'false');
  }

  function showTranscript(answer) {
    $('speech-text').textContent = answer.text;
    const language = answer.language ? answer.language.charAt(0).toUpperCase() + answer.language.slice(1) : '';
    $('speech-text-label').textContent = answer.task === 'translate' ? 'Translation into English' : 'Transcript';
    $('speech-language-note').textContent = language ? '(spoken: ' + language + ', ' + clock(answer.duration) + ')' : '';
    const list = $('speech-segments');
    list.replaceChildren(...(answer.segments || []).map((s) => {
      const item = document.createElement('li');
      item.dataset.start = s.start;
      item.dataset.end = s.end;
      const time = document.createElement('span');
      time.className = 'time';
      time.textContent = clock(s.start) + ' – ' + clock(s.end);
      const text = document.createElement('span');
      text.className = 'segment-text';
      text.textContent = s.text.trim();
      item.append(time, ' ', text);
      return item;
    }));
    $('segments-title').hidden = !list.children.length;
    $('speech-result').hidden = false;
  }

  async function transcribe(blob, name) {
    const limit = state.settings.maxAudioBytes;
    if (limit && blob.size > limit) {
      return showError(new Error(name + ' has ' + blob.size + ' bytes; this server takes at most ' + limit + '.'));
    }
    const translate = $('speech-task').value === 'translate';
    const form = new FormData();
    form.append('file', blob, name);
    form.append('model', $('speech-model').value || 'whisper-1');
    form.append('response_format', 'verbose_json');
    if (!translate && $('speech-language').value) form.append('language', $('speech-language').value);
    setSpeechBusy(true, (translate ? 'Translating ' : 'Transcribing ') + name + '…');
    const started = performance.now();
    try {
      const response = await postForm(translate ? '/v1/audio/translations' : '/v1/audio/transcriptions', form);
      const answer = await response.json();
      showError(null);
      showTranscript(answer);
      setSpeechBusy(false, (translate ? 'Translated ' : 'Transcribed ') + name + ' in ' +
        Math.round(performance.now() - started) + ' ms.');
    } catch (error) {
      setSpeechBusy(false, '');
      showError(error);
    }
  }

  $('transcribe-file').addEventListener('click', () => {
    const file = $('audio-file').files[0];
    if (!file) {
      $('speech-status').textContent = 'Choose a file first.';
      $('audio-file').focus();
      return;
    }
    transcribe(file, file.name);
  });

  // The recording's file name by its type: what the server's decoder is told it is.
  function recordingName(type) {
    if (type.includes('ogg')) return 'recording.ogg';
    if (type.includes('mp4') || type.includes('aac')) return 'recording.m4a';
    return 'recording.webm';
  }

  async function startRecording() {
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia || typeof MediaRecorder === 'undefined') {
      return showError(new Error('This browser cannot record here (the microphone needs https or localhost).'));
    }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (e) {
      return showError(new Error('The microphone is not available: ' + e.message));
    }
    const recorder = new MediaRecorder(stream);
    speech.recorder = recorder;
    speech.chunks = [];
    recorder.addEventListener('dataavailable', (event) => { if (event.data.size) speech.chunks.push(event.data); });
    recorder.addEventListener('stop', () => {
      stream.getTracks().forEach((t) => t.stop());
      clearInterval(speech.timer);
      speech.recorder = null;
      const button = $('record');
      button.textContent = 'Record';
      button.setAttribute('aria-pressed', 'false');
      const type = recorder.mimeType || (speech.chunks[0] && speech.chunks[0].type) || 'audio/webm';
      const blob = new Blob(speech.chunks, { type });
      speech.chunks = [];
      if (!blob.size) return setSpeechBusy(false, 'Nothing was recorded.');
      transcribe(blob, recordingName(type));
    });
    recorder.start(1000);  // a chunk a second
    speech.started = performance.now();
    const button = $('record');
    button.textContent = 'Stop';
    button.setAttribute('aria-pressed', 'true');
    setSpeechBusy(true, 'Recording 0:00.0');
    $('record').disabled = false;
    const most = state.settings.maxAudioSeconds || 7200;
    speech.timer = setInterval(() => {
      const seconds = (performance.now() - speech.started) / 1000;
      $('speech-status').textContent = 'Recording ' + clock(seconds);
      if (seconds >= most && recorder.state === 'recording') recorder.stop();
    }, 250);
    showError(null);
  }

  $('record').addEventListener('click', () => {
    if (speech.recorder) {
      if (speech.recorder.state === 'recording') speech.recorder.stop();
      return;
    }
    if (!speech.busy) startRecording();
  });

  // ---------------------------------------------------------------- tabs
  const tabs = ['translate', 'documents', 'summarize', 'speech'];
  function selectTab(name, focus) {
    for (const t of tabs) {
      const tab = $('tab-' + t), panel = $('panel-' + t);
      const on = t === name;
      tab.setAttribute('aria-selected', on ? 'true' : 'false');
      tab.tabIndex = on ? 0 : -1;
      panel.hidden = !on;
      if (on && focus) tab.focus();
    }
    const languages = name !== 'summarize' && name !== 'speech';
    document.querySelector('.langs').hidden = !languages;
    $('detected').hidden = !languages || !$('detected').textContent;
  }
  for (const t of tabs) {
    $('tab-' + t).addEventListener('click', () => selectTab(t, false));
    $('tab-' + t).addEventListener('keydown', (event) => {
      if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
      const visible = tabs.filter((x) => !$('tab-' + x).hidden);
      const i = visible.indexOf(t) + (event.key === 'ArrowRight' ? 1 : -1);
      selectTab(visible[(i + visible.length) % visible.length], true);
      event.preventDefault();
    });
  }

  // ---------------------------------------------------------------- start
  async function start() {
    let tries = 0;
    for (;;) {
      try {
        state.settings = Object.assign(state.settings, await api('GET', '/frontend/settings'));
        state.languages = await api('GET', '/languages');
        showFileFormats();
        break;
      } catch (error) {
        // 503 while the models load: wait for them (a bounded number of times).
        if (error instanceof ApiError && error.status === 503 && ++tries < 120) {
          $('status').textContent = 'The models are loading…';
          await new Promise((resolve) => setTimeout(resolve, 1000));
          continue;
        }
        showError(error);
        return;
      }
    }
    $('status').textContent = '';
    const defaults = state.settings.language || {};
    fillSources(defaults.source ? defaults.source.code : '');
    fillTargets(defaults.target ? defaults.target.code : '');
    updateCount();
    if (state.settings.keyRequired && !apiKey()) showKeyForm(false);
    loadModels();
  }
  start();
})();

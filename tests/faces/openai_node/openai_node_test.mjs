// ordo serve's audio routes driven by OpenAI's own Node.js client (openai), as an application
// would use it against api.openai.com with only the base URL changed. Run by ../node_client.sh, which
// starts `ordo serve` (the tiny Whisper fixture beside the bundled en-de, an API key) and
// passes ORDO_URL, ORDO_KEY and ORDO_SOURCE_DIR. Each test is one thing the client does; the
// answers are checked against the same route called with a plain multipart POST (fetch). The
// fixture's weights are random: its words are garbage, compared only with each other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';

const url = process.env.ORDO_URL;
const key = process.env.ORDO_KEY;
const sourceDir = process.env.ORDO_SOURCE_DIR;
assert.ok(url && key && sourceDir, 'ORDO_URL, ORDO_KEY and ORDO_SOURCE_DIR must be set');

const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0, timeout: 120000 });
const wav = path.join(sourceDir, 'tests/data/hf/whisper/audio/en_16k.wav');
const german = path.join(sourceDir, 'tests/data/hf/whisper/audio/de_16k.wav');
const webm = path.join(sourceDir, 'tests/data/audio/en.webm');

// What POST /v1/audio/<route> answers to a plain multipart upload of `file` with `fields`: the
// parsed JSON, or the text of the text formats.
async function plain(route, file, fields) {
  const form = new FormData();
  form.append('file', new Blob([fs.readFileSync(file)]), path.basename(file));
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const res = await fetch(`${url}/v1/audio/${route}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}` },
    body: form,
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (res.headers.get('content-type') || '').startsWith('application/json') ? res.json() : res.text();
}

test('transcriptions.create with a file stream answers the text the route gives', async () => {
  const result = await client.audio.transcriptions.create({ file: fs.createReadStream(wav), model: 'whisper-1' });
  const expected = await plain('transcriptions', wav, { model: 'whisper-1' });
  assert.equal(typeof result.text, 'string');
  assert.equal(result.text, expected.text);
});

test('transcriptions.create with verbose_json gives the language, duration and segments', async () => {
  const result = await client.audio.transcriptions.create({
    file: fs.createReadStream(wav),
    model: 'whisper-1',
    language: 'en',
    response_format: 'verbose_json',
  });
  const expected = await plain('transcriptions', wav, { model: 'whisper-1', language: 'en', response_format: 'json' });
  assert.equal(result.text, expected.text);
  assert.equal(result.task, 'transcribe');
  assert.equal(result.language, 'english');
  assert.ok(Math.abs(result.duration - 2.78) < 0.05, String(result.duration));
  assert.ok(Array.isArray(result.segments) && result.segments.length > 0);
  for (const s of result.segments) assert.ok(typeof s.start === 'number' && typeof s.end === 'number');
});

test('transcriptions.create with word timestamps gives the words', async () => {
  const result = await client.audio.transcriptions.create({
    file: fs.createReadStream(wav),
    model: 'whisper-1',
    language: 'en',
    response_format: 'verbose_json',
    timestamp_granularities: ['word', 'segment'],
  });
  assert.ok(Array.isArray(result.words), JSON.stringify(result));
  assert.ok(Array.isArray(result.segments), JSON.stringify(result));
  for (const w of result.words) assert.ok(typeof w.word === 'string' && typeof w.start === 'number', JSON.stringify(w));
});

test('transcriptions.create with response_format text answers the plain text', async () => {
  const result = await client.audio.transcriptions.create({
    file: fs.createReadStream(wav),
    model: 'whisper-1',
    response_format: 'text',
  });
  assert.equal(result, await plain('transcriptions', wav, { model: 'whisper-1', response_format: 'text' }));
});

test('transcriptions.create with response_format srt answers subtitles', async () => {
  const result = await client.audio.transcriptions.create({
    file: fs.createReadStream(wav),
    model: 'whisper-1',
    language: 'en',
    response_format: 'srt',
  });
  assert.match(result, /^1\n00:00:\d\d,\d\d\d --> /);
});

test('a browser recording (webm/opus) uploaded with toFile is transcribed', async () => {
  const file = await toFile(fs.readFileSync(webm), 'recording.webm', { type: 'audio/webm' });
  const result = await client.audio.transcriptions.create({ file, model: 'whisper-1', response_format: 'verbose_json' });
  assert.ok(Math.abs(result.duration - 3) < 0.5, String(result.duration));
});

test('translations.create answers the text the route gives', async () => {
  const result = await client.audio.translations.create({ file: fs.createReadStream(german), model: 'whisper-1' });
  const expected = await plain('translations', german, { model: 'whisper-1' });
  assert.equal(result.text, expected.text);
});

test('translations.create with verbose_json runs the translate task', async () => {
  const result = await client.audio.translations.create({
    file: fs.createReadStream(german),
    model: 'whisper-1',
    response_format: 'verbose_json',
  });
  assert.equal(result.task, 'translate');
});

test('models.list lists the speech model and the translation model', async () => {
  const ids = [];
  for await (const model of client.models.list()) ids.push(model.id);
  assert.ok(ids.includes('whisper'), ids.join(', '));
  assert.ok(ids.includes('en-de'), ids.join(', '));
});

test('an unknown model is a BadRequestError naming the field', async () => {
  await assert.rejects(
    client.audio.transcriptions.create({ file: fs.createReadStream(wav), model: 'no-such-model' }),
    (error) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.status, 400);
      assert.equal(error.param, 'model');
      assert.equal(error.code, 'model_not_found');
      assert.equal(error.type, 'invalid_request_error');
      assert.match(error.message, /served speech models: whisper/);
      return true;
    },
  );
});

test('a file that is not audio is a BadRequestError naming the file', async () => {
  const file = await toFile(Buffer.from('this is not audio'), 'notes.txt');
  await assert.rejects(client.audio.transcriptions.create({ file, model: 'whisper-1' }), (error) => {
    assert.equal(error.status, 400);
    assert.equal(error.param, 'file');
    return true;
  });
});

test('a wrong key is an AuthenticationError', async () => {
  const wrong = new OpenAI({ apiKey: 'not-a-key', baseURL: `${url}/v1`, maxRetries: 0 });
  await assert.rejects(
    wrong.audio.transcriptions.create({ file: fs.createReadStream(wav), model: 'whisper-1' }),
    OpenAI.AuthenticationError,
  );
});

// ordo serve's DeepL API v2 driven by DeepL's own Node.js client (deepl-node), as an
// application would use it against DeepL with only the server URL changed. Run by ../node_client.sh,
// which starts `ordo serve` (the bundled en-de, an API key) and passes ORDO_URL, ORDO_KEY and
// ORDO_SOURCE_DIR. Each test is one thing the client does; the answers are checked against
// LibreTranslate's POST /translate on the same server (the same model and sentences).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import deepl from 'deepl-node';

const url = process.env.ORDO_URL;
const key = process.env.ORDO_KEY;
const sourceDir = process.env.ORDO_SOURCE_DIR;
assert.ok(url && key && sourceDir, 'ORDO_URL, ORDO_KEY and ORDO_SOURCE_DIR must be set');

const translator = new deepl.Translator(key, { serverUrl: url, maxRetries: 1, minTimeout: 60000 });
const bicycle = 'A man is riding a bicycle down the street.';
const dogs = 'Two dogs play in the snow.';

// What LibreTranslate's POST /translate answers for `texts` (en -> de).
async function libre(texts) {
  const res = await fetch(`${url}/translate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ q: texts, source: 'en', target: 'de', api_key: key }),
  });
  assert.equal(res.status, 200);
  return (await res.json()).translatedText;
}

function scratch() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'ordo-deepl-node-'));
}

test('translateText translates one text and reports the detected source', async () => {
  const result = await translator.translateText(bicycle, null, 'de');
  assert.equal(result.text, (await libre([bicycle]))[0]);
  assert.equal(result.detectedSourceLang, 'en');
  assert.equal(result.billedCharacters, bicycle.length);
});

test('translateText translates several texts in order', async () => {
  const results = await translator.translateText([bicycle, dogs], 'en', 'de');
  assert.deepEqual(
    results.map((r) => r.text),
    await libre([bicycle, dogs]),
  );
});

test('translateText with html tag handling keeps the markup', async () => {
  const result = await translator.translateText('<p>Two <b>dogs</b> play in the snow.</p>', 'en', 'de', {
    tagHandling: 'html',
  });
  assert.match(result.text, /^<p>.*<b>.*<\/b>.*<\/p>$/);
});

test('the newer DeepLClient translates as the Translator does', async () => {
  const client = new deepl.DeepLClient(key, { serverUrl: url, maxRetries: 1 });
  const result = await client.translateText(dogs, 'en', 'de');
  assert.equal(result.text, (await libre([dogs]))[0]);
});

test('a wrong key is an AuthorizationError', async () => {
  const wrong = new deepl.Translator('not-a-key', { serverUrl: url, maxRetries: 0 });
  await assert.rejects(wrong.translateText(dogs, 'en', 'de'), deepl.AuthorizationError);
});

test('the source and target languages are the served ones', async () => {
  const sources = await translator.getSourceLanguages();
  assert.deepEqual(sources, [{ code: 'en', name: 'English' }]);
  const targets = await translator.getTargetLanguages();
  assert.deepEqual(targets, [{ code: 'de', name: 'German', supportsFormality: false }]);
});

test('getUsage counts the characters translated with the key', async () => {
  const before = await translator.getUsage();
  await translator.translateText(dogs, 'en', 'de');
  const after = await translator.getUsage();
  assert.equal(after.character.count - before.character.count, dogs.length);
  assert.equal(after.character.limit, 100000000);
  assert.equal(after.anyLimitReached(), false);
});

test('a glossary is created, listed, read, applied and deleted', async () => {
  const entries = new deepl.GlossaryEntries({ entries: { bicycle: 'Velo', street: 'Gasse' } });
  const glossary = await translator.createGlossary('bikes', 'en', 'de', entries);
  assert.equal(glossary.name, 'bikes');
  assert.equal(glossary.ready, true);
  assert.equal(glossary.sourceLang, 'en');
  assert.equal(glossary.targetLang, 'de');
  assert.equal(glossary.entryCount, 2);
  assert.ok(!Number.isNaN(glossary.creationTime.getTime()));

  const listed = await translator.listGlossaries();
  assert.ok(listed.some((g) => g.glossaryId === glossary.glossaryId));
  assert.deepEqual((await translator.getGlossary(glossary.glossaryId)).entryCount, 2);
  assert.deepEqual((await translator.getGlossaryEntries(glossary)).entries(), { bicycle: 'Velo', street: 'Gasse' });
  const pairs = await translator.getGlossaryLanguagePairs();
  assert.deepEqual(pairs, [{ sourceLang: 'en', targetLang: 'de' }]);

  const result = await translator.translateText(bicycle, 'en', 'de', { glossary });
  assert.match(result.text, /Velo/);

  await translator.deleteGlossary(glossary);
  await assert.rejects(translator.getGlossary(glossary.glossaryId), deepl.GlossaryNotFoundError);
});

test('a CSV glossary is read as DeepL reads one', async () => {
  const glossary = await translator.createGlossaryWithCsv('csv', 'en', 'de', Buffer.from('bicycle,Velo\n'));
  assert.equal(glossary.entryCount, 1);
  await translator.deleteGlossary(glossary);
});

test('translateDocument translates a text file', async () => {
  const dir = scratch();
  const input = path.join(dir, 'hello.txt');
  const output = path.join(dir, 'hello.de.txt');
  fs.writeFileSync(input, `${bicycle}\n${dogs}\n`);
  const status = await translator.translateDocument(input, output, 'en', 'de');
  assert.equal(status.done(), true);
  assert.equal(status.billedCharacters, bicycle.length + dogs.length);
  const expected = await libre([bicycle, dogs]);
  assert.equal(fs.readFileSync(output, 'utf8'), `${expected[0]}\n${expected[1]}\n`);
  fs.rmSync(dir, { recursive: true });
});

test('translateDocument translates a Word document into a Word document', async (t) => {
  const input = path.join(sourceDir, 'tests/data/files/report.docx');
  if (!fs.existsSync(input)) {
    t.skip(`${input} is not there`);
    return;
  }
  const dir = scratch();
  const output = path.join(dir, 'report.de.docx');
  const status = await translator.translateDocument(input, output, 'en', 'de');
  assert.equal(status.done(), true);
  const bytes = fs.readFileSync(output);
  assert.equal(bytes.subarray(0, 2).toString(), 'PK');
  fs.rmSync(dir, { recursive: true });
});

test('a document of a type the server does not read is refused at upload', async () => {
  const dir = scratch();
  const input = path.join(dir, 'notes.xyz');
  fs.writeFileSync(input, 'text');
  await assert.rejects(translator.uploadDocument(input, 'en', 'de'), /not supported/);
  fs.rmSync(dir, { recursive: true });
});

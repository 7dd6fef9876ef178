"""Files through `import ordo` (Translator.translate_file) with the bundled en-de model, each
made here by the tool people make them with and read back by it: a Word document by
python-docx, a workbook by openpyxl, a catalogue checked by gettext's msgfmt. The bar: the
structure comes back as it was and each paragraph's text is the plain-text translation of it."""
import os
import shutil
import subprocess

import pytest

import ordo

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODEL = os.path.join(ROOT, "models", "en-de")

PARAGRAPHS = [
    "The weather was cold in the morning. A man walked his dog along the river.",
    "Two children are playing in the park.",
]


@pytest.fixture(scope="module")
def translator():
    return ordo.Translator(MODEL)


def plain(translator, text):
    return translator.translate_documents([text])[0].text


def test_a_word_document_keeps_its_paragraphs_table_and_bold_run(translator, tmp_path):
    docx = pytest.importorskip("docx")
    source = docx.Document()
    source.add_heading("A short report", level=1)
    for text in PARAGRAPHS:
        source.add_paragraph(text)
    p = source.add_paragraph("The ")
    p.add_run("red").bold = True
    p.add_run(" car is fast.")
    table = source.add_table(rows=2, cols=2)
    for (r, c), text in zip([(0, 0), (0, 1), (1, 0), (1, 1)], ["A woman is reading.", "2024", "The dog runs.", "A cat."]):
        table.cell(r, c).text = text
    path_in, path_out = str(tmp_path / "report.docx"), str(tmp_path / "report.de.docx")
    source.save(path_in)

    assert translator.translate_file(path_in, path_out) == path_out
    out = docx.Document(path_out)
    sources = docx.Document(path_in)
    assert [p.style.name for p in out.paragraphs] == [p.style.name for p in sources.paragraphs]
    for before, after in zip(sources.paragraphs, out.paragraphs):
        assert after.text == plain(translator, before.text), before.text
    assert len(out.tables) == 1
    cells_in = [cell.text for row in sources.tables[0].rows for cell in row.cells]
    cells_out = [cell.text for row in out.tables[0].rows for cell in row.cells]
    # A cell of only digits ("2024") is kept as it is rather than given to the model.
    assert cells_out == [text if text.isdigit() else plain(translator, text) for text in cells_in]
    bold = [run.text for run in out.paragraphs[-1].runs if run.bold]
    assert len(bold) == 1 and bold[0].strip(), [(r.text, r.bold) for r in out.paragraphs[-1].runs]


def test_a_workbook_keeps_its_numbers_and_formulas(translator, tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet["A1"] = "Two children are playing in the park."
    sheet["A2"] = 42
    sheet["A3"] = "=A2*2"
    sheet["B1"] = "The dog runs."
    path_in, path_out = str(tmp_path / "book.xlsx"), str(tmp_path / "book.de.xlsx")
    book.save(path_in)
    translator.translate_file(path_in, path_out)
    out = openpyxl.load_workbook(path_out).active
    assert out["A1"].value == plain(translator, "Two children are playing in the park.")
    assert out["B1"].value == plain(translator, "The dog runs.")
    assert out["A2"].value == 42
    assert out["A3"].value == "=A2*2"


def test_subtitles_keep_every_timing(translator, tmp_path):
    srt = ("1\n00:00:01,000 --> 00:00:03,500\nA man walked his dog\n\n"
           "2\n00:00:03,600 --> 00:00:06,000\nalong the river.\n\n"
           "3\n00:00:07,000 --> 00:00:09,000\nTwo children are playing.\n")
    path_in, path_out = tmp_path / "talk.srt", tmp_path / "talk.de.srt"
    path_in.write_text(srt, encoding="utf-8")
    translator.translate_file(str(path_in), str(path_out))
    lines_in, lines_out = srt.split("\n"), path_out.read_text(encoding="utf-8").split("\n")
    timings = [line for line in lines_in if "-->" in line]
    assert [line for line in lines_out if "-->" in line] == timings
    assert lines_out[0] == "1"
    assert "Kinder" in path_out.read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="gettext's msgfmt is not installed")
def test_a_gettext_catalogue_passes_msgfmt_check(translator, tmp_path):
    pot = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
           '#: app.c:10\n#, c-format\nmsgid "The dog has %d toys."\nmsgstr ""\n\n'
           '#: app.c:12\nmsgid "Two children are playing."\nmsgstr ""\n\n'
           '#, c-format\nmsgid "One file"\nmsgid_plural "%d files"\nmsgstr[0] ""\nmsgstr[1] ""\n')
    path_in, path_out = tmp_path / "app.pot", tmp_path / "de.po"
    path_in.write_text(pot, encoding="utf-8")
    translator.translate_file(str(path_in), str(path_out), target_lang=None)
    subprocess.run(["msgfmt", "--check", "-o", os.devnull, str(path_out)], check=True)
    text = path_out.read_text(encoding="utf-8")
    assert 'msgid "Two children are playing."' in text
    assert 'msgstr "' + plain(translator, "Two children are playing.") + '"' in text


def test_a_file_that_is_not_its_format_is_one_clear_error(translator, tmp_path):
    path_in = tmp_path / "notes.docx"
    path_in.write_text("just text, not a Word document", encoding="utf-8")
    with pytest.raises(ordo.Error, match="notes.docx"):
        translator.translate_file(str(path_in), str(tmp_path / "out.docx"))
    assert not (tmp_path / "out.docx").exists()

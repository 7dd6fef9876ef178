#!/usr/bin/python3
# Remakes the OpenDocument and EPUB fixtures of tests/files/open_document_test.cpp and
# epub_test.cpp in tests/data/files/. The documents are written by LibreOffice itself (odfpy
# builds a draft with the features the tests need, soffice opens and saves it), so the tests
# read what real files hold: LibreOffice's styles, its span and soft-page-break habits, its
# table and slide structure. The EPUB is LibreOffice's own EPUB export of the text document.
# Each output is opened once more by soffice (converted to text) to show it is readable.
#
#   /usr/bin/python3 tools/codegen/files/make_open_document_files.py   (from the repository)
#
# With --check DIR it instead opens ordo's outputs in LibreOffice: run the tests with
# ORDO_FILES_TEST_OUT=DIR (they keep their translated files there), then --check DIR converts
# each .odt/.odp/.ods to PDF and fails on one LibreOffice cannot open.
#
# Needs python3-odf and LibreOffice (7.4 or later: the EPUB export filter).
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

from odf.dc import Description, Title
from odf.draw import Frame, Page, TextBox
from odf.opendocument import OpenDocumentPresentation, OpenDocumentSpreadsheet, OpenDocumentText
from odf.presentation import Notes
from odf.style import Header, MasterPage, PageLayout, PageLayoutProperties, Style, TextProperties
from odf.table import Table, TableCell, TableColumn, TableRow
from odf.text import A, H, LineBreak, Note, NoteBody, NoteCitation, P, S, Span, Tab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.join(ROOT, "tests", "data", "files")


def soffice(work, args):
    profile = "file://" + os.path.join(work, "profile")
    subprocess.run(["soffice", "-env:UserInstallation=" + profile, "--headless"] + args, cwd=work, check=True,
                   stdout=subprocess.DEVNULL)


def resave(work, draft, ext, name):
    """soffice opens the draft and writes it as tests/data/files/<name>."""
    out = os.path.join(work, "saved")
    os.makedirs(out, exist_ok=True)
    soffice(work, ["--convert-to", ext, "--outdir", out, draft])
    saved = os.path.join(out, os.path.splitext(os.path.basename(draft))[0] + "." + ext)
    shutil.copyfile(saved, os.path.join(OUT, name))
    return os.path.join(OUT, name)


def text_document(path):
    doc = OpenDocumentText()
    doc.meta.addElement(Title(text="A small book"))
    doc.meta.addElement(Description(text="Cats, dogs and prices."))
    layout = PageLayout(name="Pages")
    layout.addElement(PageLayoutProperties(pagewidth="21cm", pageheight="29.7cm"))
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Standard", pagelayoutname=layout)
    header = Header()
    header.addElement(P(text="Company report"))
    master.addElement(header)
    doc.masterstyles.addElement(master)
    bold = Style(name="Strong", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    doc.automaticstyles.addElement(bold)
    doc.text.addElement(H(outlinelevel=1, text="The first chapter"))
    p = P(text="The cat sleeps on the ")
    p.addElement(Span(stylename=bold, text="red"))
    p.addText(" sofa. It dreams of fish.")
    doc.text.addElement(p)
    p = P(text="Read the ")
    p.addElement(A(href="https://example.org/manual", text="manual"))
    p.addText(" before you start.")
    doc.text.addElement(p)
    p = P(text="Name:")
    p.addElement(Tab())
    p.addText("Anna")
    p.addElement(LineBreak())
    p.addText("Two")
    p.addElement(S(c=2))
    p.addText("spaces here.")
    doc.text.addElement(p)
    p = P(text="A sentence with a note")
    note = Note(id="ftn1", noteclass="footnote")
    note.addElement(NoteCitation(text="1"))
    body = NoteBody()
    body.addElement(P(text="The note says hello."))
    note.addElement(body)
    p.addElement(note)
    p.addText(" in it.")
    doc.text.addElement(p)
    table = Table(name="Prices")
    table.addElement(TableColumn(numbercolumnsrepeated=2))
    for a, b in (("Apple", "Green fruit"), ("Bread", "Fresh every day")):
        row = TableRow()
        for value in (a, b):
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=value))
            row.addElement(cell)
        table.addElement(row)
    row = TableRow()
    cell = TableCell(valuetype="string")
    cell.addElement(P(text="Total"))
    row.addElement(cell)
    cell = TableCell(valuetype="float", value="42")
    cell.addElement(P(text="42"))
    row.addElement(cell)
    table.addElement(row)
    doc.text.addElement(table)
    doc.text.addElement(H(outlinelevel=1, text="The second chapter"))
    doc.text.addElement(P(text="The dog runs in the park. The sun is warm."))
    doc.save(path)


def presentation(path):
    doc = OpenDocumentPresentation()
    layout = PageLayout(name="Screen")
    layout.addElement(PageLayoutProperties(pagewidth="28cm", pageheight="21cm", printorientation="landscape"))
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Default", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    bold = Style(name="T1", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    doc.automaticstyles.addElement(bold)
    for n, (title, body) in enumerate((("Welcome", "Our new product is fast."), ("Prices", "It costs little."))):
        page = Page(name="page%d" % (n + 1), masterpagename=master)
        frame = Frame(width="24cm", height="3cm", x="2cm", y="1cm")
        box = TextBox()
        box.addElement(P(text=title))
        frame.addElement(box)
        page.addElement(frame)
        frame = Frame(width="24cm", height="12cm", x="2cm", y="5cm")
        box = TextBox()
        p = P(text="Look: ")
        p.addElement(Span(stylename=bold, text="very"))
        p.addText(" " + body)
        box.addElement(p)
        frame.addElement(box)
        page.addElement(frame)
        notes = Notes()
        frame = Frame(width="16cm", height="10cm", x="2cm", y="12cm")
        box = TextBox()
        box.addElement(P(text="Speak slowly here."))
        frame.addElement(box)
        notes.addElement(frame)
        page.addElement(notes)
        doc.presentation.addElement(page)
    doc.save(path)


def spreadsheet(path):
    doc = OpenDocumentSpreadsheet()
    table = Table(name="Fruit")
    table.addElement(TableColumn(numbercolumnsrepeated=3))
    rows = (("Name", "Count", "Note"), ("Apple", 3, "Sweet and red"), ("Pear", 4, "Soft"))
    for values in rows:
        row = TableRow()
        for value in values:
            if isinstance(value, int):
                cell = TableCell(valuetype="float", value=str(value))
            else:
                cell = TableCell(valuetype="string")
            cell.addElement(P(text=str(value)))
            row.addElement(cell)
        table.addElement(row)
    row = TableRow()
    cell = TableCell(valuetype="string")
    cell.addElement(P(text="Total"))
    row.addElement(cell)
    cell = TableCell(valuetype="float", value="7", formula="of:=SUM([.B2:.B3])")
    cell.addElement(P(text="7"))
    row.addElement(cell)
    cell = TableCell(valuetype="string", formula='of:=CONCATENATE("a";"b")', stringvalue="ab")
    cell.addElement(P(text="ab"))
    row.addElement(cell)
    table.addElement(row)
    doc.spreadsheet.addElement(table)
    doc.save(path)


def check(directory):
    with tempfile.TemporaryDirectory() as work:
        names = sorted(n for n in os.listdir(directory) if os.path.splitext(n)[1] in (".odt", ".odp", ".ods"))
        for name in names:
            soffice(work, ["--convert-to", "pdf", "--outdir", os.path.join(work, "check"), os.path.join(directory, name)])
            pdf = os.path.join(work, "check", os.path.splitext(name)[0] + ".pdf")
            if not os.path.exists(pdf):
                sys.exit(name + ": LibreOffice did not open it")
            # A file LibreOffice cannot read as a document it opens as plain text: the zip's bytes.
            text = subprocess.run(["pdftotext", pdf, "-"], check=True, capture_output=True, text=True).stdout
            if "mimetype" in text or "PK" in text:
                sys.exit(name + ": LibreOffice read it as plain text, not as a document")
        print("%d files open in LibreOffice" % len(names))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(os.path.abspath(sys.argv[2]))
        return
    if not shutil.which("soffice"):
        sys.exit("soffice (LibreOffice) is needed")
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        text_document(os.path.join(work, "draft.odt"))
        odt = resave(work, os.path.join(work, "draft.odt"), "odt", "sample.odt")
        presentation(os.path.join(work, "slides.odp"))
        resave(work, os.path.join(work, "slides.odp"), "odp", "sample.odp")
        spreadsheet(os.path.join(work, "sheet.ods"))
        resave(work, os.path.join(work, "sheet.ods"), "ods", "sample.ods")
        # LibreOffice's EPUB export splits the text at its level 1 headings: two chapters.
        resave(work, odt, "epub", "sample.epub")
        # A broken book for the error tests: the same EPUB without its META-INF/container.xml.
        with zipfile.ZipFile(os.path.join(OUT, "sample.epub")) as book, \
                zipfile.ZipFile(os.path.join(OUT, "no_container.epub"), "w") as broken:
            for info in book.infolist():
                if info.filename != "META-INF/container.xml":
                    broken.writestr(info, book.read(info.filename))
        # Each output opens again.
        for name in ("sample.odt", "sample.odp", "sample.ods"):
            soffice(work, ["--convert-to", "pdf", "--outdir", os.path.join(work, "check"), os.path.join(OUT, name)])
            if not os.path.exists(os.path.join(work, "check", os.path.splitext(name)[0] + ".pdf")):
                sys.exit(name + ": LibreOffice did not open it")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
# Remakes the Office Open XML fixtures of tests/files/office_open_xml_test.cpp in
# tests/data/files/, each written by a real tool so the tests read what real files hold:
#   report.docx  python-docx: a heading, a paragraph with a bold and an italic word, a tab and a
#                line break, a table, a page header, a paragraph of only a number;
#   table.xlsx   openpyxl: shared strings, numbers, a formula, a date, a string of digits;
#   slides.pptx  LibreOffice's PowerPoint export of tests/data/files/sample.odp (made by
#                make_open_document_files.py): slide titles, a bold word, speaker notes;
#   linked.docx  LibreOffice's Word export of sample.odt: a hyperlink, a footnote, a tab, a
#                line break, a table, a header as LibreOffice writes them;
#   rich.xlsx    LibreOffice's Excel export of sample.ods (rich text runs in shared strings).
# Each output is opened once more (python-docx, openpyxl, soffice) to show it is readable.
#
#   /usr/bin/python3 tools/codegen/files/make_office_files.py   (from the repository)
#
# Needs python3-docx, python3-openpyxl and LibreOffice.
import datetime
import os
import shutil
import subprocess
import tempfile

import docx
import openpyxl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.join(ROOT, "tests", "data", "files")


def soffice(work, args):
    profile = "file://" + os.path.join(work, "profile")
    subprocess.run(["soffice", "-env:UserInstallation=" + profile, "--headless"] + args, cwd=work, check=True,
                   stdout=subprocess.DEVNULL)


def convert(work, source, ext, name):
    """soffice opens tests/data/files/<source> and writes it as tests/data/files/<name>."""
    out = os.path.join(work, "converted")
    os.makedirs(out, exist_ok=True)
    soffice(work, ["--convert-to", ext, "--outdir", out, os.path.join(OUT, source)])
    saved = os.path.join(out, os.path.splitext(source)[0] + "." + ext)
    shutil.copyfile(saved, os.path.join(OUT, name))


def report(path):
    doc = docx.Document()
    doc.sections[0].header.paragraphs[0].text = "Quarterly report"
    doc.add_heading("Results of the year", level=1)
    p = doc.add_paragraph("The cat sleeps on the ")
    p.add_run("red").bold = True
    p.add_run(" sofa. It dreams of ")
    p.add_run("fish").italic = True
    p.add_run(".")
    p = doc.add_paragraph("Name:")
    p.add_run().add_tab()
    p.add_run("Anna")
    p.add_run().add_break()
    p.add_run("Second line of the address.")
    table = doc.add_table(rows=2, cols=2)
    for row, (a, b) in enumerate((("Apple", "Green fruit"), ("Bread", "Fresh every day"))):
        table.cell(row, 0).text = a
        table.cell(row, 1).text = b
    doc.add_paragraph("2024")
    doc.add_paragraph("The dog runs in the park. The sun is warm.")
    doc.core_properties.created = datetime.datetime(2026, 1, 1)
    doc.core_properties.modified = datetime.datetime(2026, 1, 1)
    doc.save(path)
    docx.Document(path)


def table(path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Prices"
    sheet.append(["Fruit", "Price", "Note"])
    sheet.append(["Apple", 1.5, "Green and sweet"])
    sheet.append(["Bread", 3, "Fresh every day"])
    sheet.append(["Total", "=SUM(B2:B3)", "12345"])
    sheet["D1"] = datetime.date(2026, 1, 1)
    book.properties.created = datetime.datetime(2026, 1, 1)
    book.properties.modified = datetime.datetime(2026, 1, 1)
    book.save(path)
    openpyxl.load_workbook(path)


def main():
    with tempfile.TemporaryDirectory() as work:
        report(os.path.join(OUT, "report.docx"))
        table(os.path.join(OUT, "table.xlsx"))
        convert(work, "sample.odp", "pptx", "slides.pptx")
        convert(work, "sample.odt", "docx", "linked.docx")
        convert(work, "sample.ods", "xlsx", "rich.xlsx")
        check = os.path.join(work, "check")
        for name, ext in (("slides.pptx", "odp"), ("linked.docx", "odt"), ("rich.xlsx", "ods")):
            soffice(work, ["--convert-to", ext, "--outdir", check, os.path.join(OUT, name)])
            if not os.path.exists(os.path.join(check, os.path.splitext(name)[0] + "." + ext)):
                raise SystemExit("soffice could not open " + name)
        docx.Document(os.path.join(OUT, "linked.docx"))
        openpyxl.load_workbook(os.path.join(OUT, "rich.xlsx"))


if __name__ == "__main__":
    main()

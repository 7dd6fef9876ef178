#!/usr/bin/python3
# Remakes the seeds of the `files` fuzz harness (tests/fuzz/fuzz_files.cpp) in
# tests/fuzz/corpus/files/: each is one byte naming the format (its index in ordo::file_formats(),
# i.e. ordo::FileFormat) and the file. The archives are the smallest that still have every
# construct the readers look at (runs with properties, a link, a tab, a break, a field, shared
# and inline strings, a slide), written with Python's zipfile; the OpenDocument and EPUB seeds
# are the fixtures of tests/data/files as they are; the text formats are a few lines each.
#
#   /usr/bin/python3 tools/codegen/files/make_fuzz_seeds.py   (from the repository)
import io
import os
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "files")
DATA = os.path.join(ROOT, "tests", "data", "files")

TEXT, HTML, DOCX, PPTX, XLSX, ODT, ODP, ODS, EPUB, SRT, VTT, PO, XLIFF, JSON = range(14)

RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/'
        'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="{}"/></Relationships>')
W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ' \
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ' \
    'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
S = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'


def archive(parts):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, text)
    return out.getvalue()


def seeds():
    yield "docx", DOCX, archive([
        ("_rels/.rels", RELS.format("word/document.xml")),
        ("word/document.xml", f'<?xml version="1.0"?>\n<w:document {W}><w:body><w:p><w:pPr/><w:r><w:t xml:space='
         '"preserve">The </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>red</w:t></w:r><w:r><w:tab/><w:t>cat.</w:t>'
         '<w:br/></w:r><w:hyperlink r:id="rId2"><w:r><w:t>Read more</w:t></w:r></w:hyperlink><w:r><w:fldChar '
         'w:fldCharType="begin"/></w:r><w:r><w:instrText>PAGE</w:instrText></w:r><w:r><w:fldChar w:fldCharType='
         '"end"/></w:r></w:p><w:p><w:ins><w:r><w:t>New</w:t></w:r></w:ins></w:p></w:body></w:document>'),
        ("word/header1.xml", f'<w:hdr {W}><w:p><w:r><w:t>Head</w:t></w:r></w:p></w:hdr>'),
    ])
    yield "pptx", PPTX, archive([
        ("_rels/.rels", RELS.format("ppt/presentation.xml")),
        ("ppt/presentation.xml", f'<p:presentation {A}/>'),
        ("ppt/slides/slide1.xml", f'<p:sld {A}><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:pPr/><a:r><a:rPr lang="en"/>'
         '<a:t>Look: </a:t></a:r><a:r><a:rPr b="1"/><a:t>fast</a:t></a:r><a:br/><a:fld id="x" type="slidenum"><a:t>1'
         '</a:t></a:fld><a:endParaRPr/></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>'),
    ])
    yield "xlsx", XLSX, archive([
        ("_rels/.rels", RELS.format("xl/workbook.xml")),
        ("xl/workbook.xml", f'<workbook {S}/>'),
        ("xl/sharedStrings.xml", f'<sst {S}><si><t>Apple pie</t></si><si><r><t xml:space="preserve">A </t></r><r><rPr>'
         '<b/></rPr><t>hot</t></r><r><t>\nsoup</t></r></si><si><t>12.5</t></si></sst>'),
        ("xl/worksheets/sheet1.xml", f'<worksheet {S}><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" '
         't="inlineStr"><is><t>Fresh bread</t></is></c><c r="C1"><f>1+1</f><v>2</v></c></row></sheetData></worksheet>'),
    ])
    for name, fmt in (("sample.odt", ODT), ("sample.odp", ODP), ("sample.ods", ODS), ("sample.epub", EPUB)):
        with open(os.path.join(DATA, name), "rb") as f:
            yield os.path.splitext(name)[1][1:], fmt, f.read()
    yield "srt", SRT, b"1\n00:00:01,000 --> 00:00:02,500\nHello <i>there</i>.\nHow are you?\n\n2\n00:00:03,000 --> " \
                      b"00:00:04,000\nFine, thanks.\n"
    yield "vtt", VTT, b"WEBVTT\n\nNOTE a comment\n\n00:01.000 --> 00:02.000 align:start\n<v Anna>Hello, %s!</v>\n"
    yield "po", PO, b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n#, c-format\nmsgid "Hello, ' \
                    b'%s! You have {count} files."\nmsgstr ""\n\nmsgid "One file"\nmsgid_plural "%d files"\nmsgstr[0] ""\n' \
                    b'msgstr[1] ""\n'
    yield "xliff", XLIFF, b'<?xml version="1.0"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">' \
                          b'<file source-language="en" datatype="plaintext" original="x"><body><trans-unit id="1">' \
                          b'<source>Save <g id="1">all</g> files</source></trans-unit></body></file></xliff>\n'
    yield "json", JSON, b'{"greeting": "Hello, {name}!", "menu": {"open": "Open the file", "count": 3}}\n'
    yield "txt", TEXT, b"The first paragraph. It has two sentences.\n\nThe second one.\n"
    yield "html", HTML, b"<p>Read the <a href='x'>manual</a> first.</p>"


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, fmt, data in seeds():
        with open(os.path.join(OUT, "seed." + name), "wb") as f:
            f.write(bytes([fmt]) + data)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""docs/files_docx.png: a Word document made by python-docx (a heading, a bold and a red italic
run, bullets, a table), translated by `ordo translate` with the bundled en-de, both rendered by
LibreOffice (headless, to PDF) and pdftoppm, side by side. Needs python3-docx, python3-pil,
LibreOffice (soffice) and poppler-utils; none of them is a build or test dependency.

    /usr/bin/python3 tools/codegen/files/make_docx_picture.py [BUILD_DIR]
"""
import os
import subprocess
import sys
import tempfile

import docx
from docx.shared import RGBColor
from PIL import Image, ImageDraw, ImageFont

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")


def make(path):
    d = docx.Document()
    d.add_heading("A trip to the mountains", level=1)
    p = d.add_paragraph("Last summer a group of friends walked along the river to the old bridge. ")
    p.add_run("The weather was warm").bold = True
    p.add_run(" and the sky was blue.")
    p = d.add_paragraph("A man is riding a ")
    red = p.add_run("red")
    red.italic = True
    red.font.color.rgb = RGBColor(0xC0, 0, 0)
    p.add_run(" bicycle down the street.")
    d.add_heading("What we saw", level=2)
    for text in ["Two dogs are playing in the snow.", "A woman is reading a book in the park.",
                 "Children are swimming in the lake."]:
        d.add_paragraph(text, style="List Bullet")
    table = d.add_table(rows=3, cols=2)
    table.style = "Light Grid Accent 1"
    for i, row in enumerate([("Place", "Note"), ("The old bridge", "A man is fishing."),
                             ("The lake", "The water is cold.")]):
        for j, text in enumerate(row):
            table.cell(i, j).text = text
    d.add_paragraph("We took many pictures and went home in the evening.")
    d.save(path)


def page(folder, name):
    subprocess.run(["soffice", "--headless", "--convert-to", "pdf", "--outdir", folder, os.path.join(folder, name)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    stem = os.path.splitext(name)[0]
    subprocess.run(["pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", os.path.join(folder, stem + ".pdf"),
                    os.path.join(folder, stem)], check=True)
    return Image.open(os.path.join(folder, stem + "-1.png"))


def main():
    with tempfile.TemporaryDirectory() as folder:
        make(os.path.join(folder, "trip.docx"))
        subprocess.run([os.path.join(BUILD, "ordo"), "translate", "-q", "-i", os.path.join(folder, "trip.docx"),
                        "-o", os.path.join(folder, "trip.de.docx")], check=True)
        left, right = page(folder, "trip.docx"), page(folder, "trip.de.docx")
    height = min(left.height, 620)
    left, right = left.crop((0, 0, left.width, height)), right.crop((0, 0, right.width, height))
    out = Image.new("RGB", (left.width + right.width + 30, height + 40), "white")
    draw = ImageDraw.Draw(out)
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", 18)
    draw.text((20, 10), "trip.docx (python-docx), LibreOffice", fill="black", font=font)
    draw.text((left.width + 50, 10), "trip.de.docx (ordo translate, bundled en-de), LibreOffice", fill="black",
              font=font)
    out.paste(left, (0, 40))
    out.paste(right, (left.width + 30, 40))
    draw.line((left.width + 15, 40, left.width + 15, out.height), fill="#888888", width=2)
    out.save(os.path.join(ROOT, "docs", "files_docx.png"))


if __name__ == "__main__":
    main()

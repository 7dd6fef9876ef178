# ctest-label: integration
"""The page `ordo serve` serves at GET /, in a real browser.

Headless Debian chromium, driven through /usr/bin/chromedriver by python3-selenium, against the
real `ordo serve` on 127.0.0.1 (--port 0: the port it prints) with the bundled models. Every
expected text comes from the real `ordo translate` / `ordo summarize` on the same input. Every
wait is bounded; only the servers this file starts are stopped. Screenshots at 1280 and 360 px
go to $ORDO_BUILD_DIR/web_screenshots/.

    ORDO_BUILD_DIR=build /usr/bin/python3 -m pytest -q tests/web/test_page.py
"""
import json
import os
import pathlib
import select
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

SOURCE_DIR = pathlib.Path(os.environ.get("ORDO_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BUILD_DIR = pathlib.Path(os.environ.get("ORDO_BUILD_DIR", SOURCE_DIR / "build"))
ORDO = str(BUILD_DIR / "ordo")
SHOTS = BUILD_DIR / "web_screenshots"
WAIT = 30  # seconds, for anything the page does after one request

EN = "A man is riding a bicycle down the street."
DE = "Ein Mann fährt mit dem Fahrrad die Straße entlang."
DIALOGUE = "#Person1#: Hi, how are you? #Person2#: Fine, thanks. I am going to the cinema tonight."


# ---------------------------------------------------------------- the real binary
def run_ordo(args, text):
    done = subprocess.run([ORDO, *args], input=text.encode(), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


class Server:
    """`ordo serve --port 0 ARGS`, its port read from the line it prints, ready when /ready is 200."""

    def __init__(self, *args, ready_seconds=90):
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([ORDO, "serve", "--host", "127.0.0.1", "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=self.log)
        deadline = time.monotonic() + ready_seconds
        marker, line = b"listening on http://127.0.0.1:", b""
        self.port = None
        while self.port is None:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError("ordo serve did not print its port: " + self.stderr())
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                line += os.read(self.proc.stdout.fileno(), 4096)
                if marker in line:
                    self.port = int(line.split(marker)[1].split()[0])
        self.url = "http://127.0.0.1:%d" % self.port
        while time.monotonic() < deadline:
            try:
                if self.get("/ready")[0] == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("ordo serve was not ready in time: " + self.stderr())

    def get(self, path, headers=None):
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, dict(answer.headers), answer.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def stderr(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def server():
    s = Server("-m", "en-de", "-m", "de-en", "-m", "dialogsum")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def downloads():
    with tempfile.TemporaryDirectory(prefix="ordo-web-downloads-") as d:
        yield pathlib.Path(d)


def make_driver(download_dir):
    options = webdriver.ChromeOptions()
    chromium = "/usr/lib/chromium/chromium"
    if os.path.exists(chromium):
        options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900", "--no-first-run", "--disable-extensions", "--lang=en-US"):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {
        "download.default_directory": str(download_dir), "download.prompt_for_download": False})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(WAIT)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(download_dir)})
    return driver


@pytest.fixture(scope="module")
def driver(downloads):
    d = make_driver(downloads)
    yield d
    d.quit()


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def wait_for(driver, condition, what, seconds=WAIT):
    return WebDriverWait(driver, seconds, poll_frequency=0.1).until(lambda d: condition(d), message=what)


def open_page(driver, server):
    driver.get(server.url + "/")
    wait_for(driver, lambda d: len(Select(d.find_element(By.ID, "target")).options) > 0, "language pickers filled")


def translate(driver, source, target, text):
    Select(driver.find_element(By.ID, "source")).select_by_value(source)
    Select(driver.find_element(By.ID, "target")).select_by_value(target)
    box = driver.find_element(By.ID, "text")
    box.clear()
    box.send_keys(text)  # translated as it is typed (debounced)


def result_text(driver):
    return driver.find_element(By.ID, "result").text


def highlighted_words(driver):
    return [int(w.get_attribute("data-index"))
            for w in driver.find_elements(By.CSS_SELECTOR, "#source-words .word.linked")]


def word_groups(pieces):
    """ordo::word_indices: '▁' starts a word, as does the piece after one ending in '</w>'."""
    words, ends = [], True
    for i, piece in enumerate(pieces):
        if i == 0 or piece.startswith("\u2581") or ends:
            words.append("")
        ends = piece.endswith("</w>")
        words[-1] += piece.replace("\u2581", "").replace("</w>", "")
    return words


def screenshot(driver, name, width):
    """The whole page at `width` CSS pixels (a phone's viewport below 500), as a PNG in SHOTS."""
    metrics = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 500}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    time.sleep(0.3)
    metrics["height"] = min(max(driver.execute_script("return document.documentElement.scrollHeight"), 600), 3000)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    time.sleep(0.3)
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    assert driver.save_screenshot(str(path))
    return path


# ---------------------------------------------------------------- HTTP: the page's files
def test_page_is_served_from_the_binary_with_its_headers(server):
    status, headers, body = server.get("/")
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert b'<script src="/static/app.js"' in body
    assert (SOURCE_DIR / "src/web/index.html").read_bytes() == body
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp and "script-src 'self'" in csp
    assert headers["Cache-Control"] == "no-cache" and headers["X-Content-Type-Options"] == "nosniff"
    etag = headers["ETag"]
    assert server.get("/", {"If-None-Match": etag})[0] == 304
    for path, kind, file in (("/static/app.js", "text/javascript", "app.js"), ("/static/style.css", "text/css", "style.css")):
        status, headers, body = server.get(path)
        assert status == 200 and headers["Content-Type"].startswith(kind)
        assert body == (SOURCE_DIR / "src/web" / file).read_bytes()
    assert server.get("/static/nothing.js")[0] == 404
    settings = json.loads(server.get("/frontend/settings")[2])
    assert settings["charLimit"] == 10000 and settings["keyRequired"] is False
    # A request is counted by the server's logger hook, just after its answer went out: poll (bounded).
    series = ['ordo_http_requests_total{route="%s",status="%d"}' % (route, status)
              for route, status in (("/", 200), ("/", 304), ("/static/app.js", 200), ("/frontend/settings", 200))]
    deadline = time.monotonic() + 10
    while True:
        metrics = server.get("/metrics")[2].decode()
        missing = [s for s in series if s not in metrics]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not missing, missing


def post(server, path, body):
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_v1_translate_gives_the_command_lines_alignment_and_attention(server):
    cli = json.loads(run_ordo(["translate", "-m", "en-de", "--json", "--attention", "--alignment", "hard"], EN + "\n"))
    status, answer = post(server, "/v1/translate", {"model": "en-de", "text": EN, "alignment": "hard", "attention": True})
    assert status == 200
    got = answer["results"][0]
    for field in ("text", "tokens", "alignment", "attention", "id_pieces", "source_tokens"):
        assert got[field] == cli[field], field
    assert got["n_best"][0]["alignment"] == cli["n_best"][0]["alignment"]
    assert got["source_text_positions"] == list(range(len(cli["source_tokens"]) - 1))  # all but </s>
    assert len(got["attention"]) == 6 and 0 <= got["alignment_layer"] < 6
    words = json.loads(run_ordo(["translate", "-m", "en-de", "--json", "--alignment", "hard", "--alignment-words"],
                                EN + "\n"))
    status, answer = post(server, "/v1/translate", {"text": EN, "source_lang": "en", "target_lang": "de",
                                                    "alignment": "hard", "alignment_words": True})
    assert status == 200 and answer["results"][0]["alignment"] == words["alignment"]
    for body, field in (({"text": EN, "alignment": "firm"}, "'alignment'"),
                        ({"text": EN, "alignment_words": True}, "'alignment_words'"),
                        ({"text": EN, "attention": "yes"}, "'attention'"),
                        ({"text": EN, "attention": True, "stream": True}, "'attention'")):
        status, answer = post(server, "/v1/translate", dict(body, model="en-de"))
        assert status == 400 and field in answer["error"], (body, answer)


def test_no_page_turns_it_off():
    s = Server("-m", "en-de", "--no-page")
    try:
        status, _, body = s.get("/")
        assert status == 404 and b"Not Found" in body
        assert s.get("/static/app.js")[0] == 404
        assert s.get("/languages")[0] == 200  # the API is still there
    finally:
        s.stop()


# ---------------------------------------------------------------- the browser
def test_typing_a_sentence_shows_the_command_lines_translation(server, driver):
    expected = run_ordo(["translate", "-m", "en-de"], EN + "\n").strip()
    open_page(driver, server)
    translate(driver, "en", "de", EN)
    wait_for(driver, lambda d: result_text(d) == expected, "the translation of the typed sentence")
    count = driver.find_element(By.ID, "count").text
    assert count == "%d / 10000" % len(EN)
    # The button translates too: a text set without typing (no input event) is sent by it.
    Select(driver.find_element(By.ID, "source")).select_by_value("de")
    Select(driver.find_element(By.ID, "target")).select_by_value("en")
    driver.execute_script("document.getElementById('text').value = arguments[0]", DE)
    time.sleep(1)  # what the pickers' changes sent has come back
    driver.find_element(By.ID, "translate").click()
    expected_en = run_ordo(["translate", "-m", "de-en"], DE + "\n").strip()
    wait_for(driver, lambda d: result_text(d) == expected_en, "the translation after the button")
    assert console_errors(driver) == []


def test_swap_exchanges_the_languages_and_translates_back(server, driver):
    german = run_ordo(["translate", "-m", "en-de"], EN + "\n").strip()
    back = run_ordo(["translate", "-m", "de-en"], german + "\n").strip()
    open_page(driver, server)
    translate(driver, "en", "de", EN)
    wait_for(driver, lambda d: result_text(d) == german, "en->de")
    driver.find_element(By.ID, "swap").click()
    assert Select(driver.find_element(By.ID, "source")).first_selected_option.get_attribute("value") == "de"
    assert Select(driver.find_element(By.ID, "target")).first_selected_option.get_attribute("value") == "en"
    assert driver.find_element(By.ID, "text").get_attribute("value") == german
    wait_for(driver, lambda d: result_text(d) == back, "de->en after the swap")
    assert console_errors(driver) == []


def test_auto_detects_german(server, driver):
    expected = run_ordo(["translate", "-m", "de-en"], DE + "\n").strip()
    open_page(driver, server)
    translate(driver, "auto", "en", DE)
    wait_for(driver, lambda d: result_text(d) == expected, "the translation from the detected German")
    detected = driver.find_element(By.ID, "detected")
    assert detected.is_displayed() and detected.get_attribute("data-language") == "de"
    assert "German" in detected.text
    assert console_errors(driver) == []


def test_hovering_a_word_marks_its_aligned_source_words(server, driver):
    # What `ordo translate --alignment hard` says, between words (--alignment-words), and the
    # source pieces the indices count (--json --attention: source_tokens, the text's then </s>).
    line = json.loads(run_ordo(["translate", "-m", "en-de", "--json", "--attention", "--alignment", "hard",
                                "--alignment-words"], EN + "\n"))
    plain = run_ordo(["translate", "-m", "en-de", "--alignment", "hard", "--alignment-words"], EN + "\n")
    pharaoh = [tuple(map(int, p.split("-"))) for p in plain.split(" ||| ")[1].split()]
    assert [list(p) for p in pharaoh] == line["alignment"]
    source_words = word_groups([t for t in line["source_tokens"] if t != "</s>"])
    target_words = word_groups(line["tokens"])

    open_page(driver, server)
    translate(driver, "en", "de", EN)
    wait_for(driver, lambda d: result_text(d) == line["text"], "the translation")
    wait_for(driver, lambda d: d.find_element(By.ID, "attention").is_displayed(), "the words view")
    shown_source = [w.text for w in driver.find_elements(By.CSS_SELECTOR, "#source-words .word")]
    shown_target = driver.find_elements(By.CSS_SELECTOR, "#target-words .word")
    assert shown_source == source_words
    assert [w.text for w in shown_target] == target_words
    some_linked = False
    for t, word in enumerate(shown_target):
        ActionChains(driver).move_to_element(word).perform()
        expected = sorted({s for s, tt in pharaoh if tt == t})
        wait_for(driver, lambda d: highlighted_words(d) == expected,
                 "target word %d (%s) marks source words %s" % (t, target_words[t], expected), seconds=5)
        some_linked = some_linked or bool(expected)
    assert some_linked
    # The keyboard does the same: a focused word marks its links, the arrow keys move on.
    last = len(shown_target) - 1
    driver.execute_script("arguments[0].focus()", shown_target[last - 1])
    expected = sorted({s for s, tt in pharaoh if tt == last - 1})
    wait_for(driver, lambda d: highlighted_words(d) == expected, "focused word marks its source words", seconds=5)
    driver.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    expected = sorted({s for s, tt in pharaoh if tt == last})
    wait_for(driver, lambda d: highlighted_words(d) == expected, "the next word after the arrow key", seconds=5)
    assert driver.switch_to.active_element.get_attribute("data-index") == str(last)
    # The heatmap opens under the result, on a canvas, for the alignment average and any layer/head.
    driver.find_element(By.CSS_SELECTOR, "#heatmap-box summary").click()
    wait_for(driver, lambda d: len(Select(d.find_element(By.ID, "layer")).options) == 1 + 6, "layer choices")
    wait_for(driver, lambda d: d.find_element(By.ID, "heatmap").size["width"] > 100, "a drawn heatmap")
    Select(driver.find_element(By.ID, "layer")).select_by_value("2")
    Select(driver.find_element(By.ID, "head")).select_by_value("1")
    assert "layer 3, head 2" in driver.find_element(By.ID, "heatmap-note").text
    # Not a blank canvas: some pixel of the cells is dark.
    dark = driver.execute_script("""
        const c = document.getElementById('heatmap'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 120 && d[i + 2] > 140) n++; return n;""")
    assert dark > 20
    # The marked word's rows and its source words' columns are outlined (orange) on it.
    orange = driver.execute_script("""
        const c = document.getElementById('heatmap'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] > 190 && d[i + 1] > 110 && d[i + 1] < 160 && d[i + 2] < 60) n++; return n;""")
    assert orange > 50
    Select(driver.find_element(By.ID, "layer")).select_by_value("align")
    assert console_errors(driver) == []
    shot = screenshot(driver, "web_1280.png", 1280)
    assert shot.stat().st_size > 10000
    shot = screenshot(driver, "web_360.png", 360)
    assert shot.stat().st_size > 10000
    # At 360 px nothing is wider than the screen.
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 360
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


# ---------------------------------------------------------------- the glossary box
def glossary_file(directory, tsv):
    path = pathlib.Path(directory) / "glossary.tsv"
    path.write_text(tsv, encoding="utf-8")
    return str(path)


def paste_glossary(driver, tsv):
    """Opens the glossary box and pastes `tsv` into it: one trusted insertion, tabs and all."""
    box = driver.find_element(By.ID, "glossary")
    if not box.is_displayed():
        driver.find_element(By.CSS_SELECTOR, "#glossary-box summary").click()
    box.click()
    driver.execute_cdp_cmd("Input.insertText", {"text": tsv})
    assert box.get_attribute("value") == tsv


def clear_glossary(driver):
    """Empties the glossary box as a person does: select all, delete."""
    box = driver.find_element(By.ID, "glossary")
    box.click()
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    assert box.get_attribute("value") == ""


def count_requests(driver):
    """From now on the page's window.fetch calls are listed in window.sentRequests."""
    driver.execute_script("""
        window.sentRequests = []; const original = window.fetch;
        window.fetch = function (url) { window.sentRequests.push(String(url)); return original.apply(this, arguments); };""")


def test_a_pasted_glossary_term_is_put_in_as_the_command_line_puts_it(server, driver, tmp_path):
    tsv = "bicycle\tVelo"
    expected = run_ordo(["translate", "-m", "en-de", "--glossary", glossary_file(tmp_path, tsv + "\n")], EN + "\n").strip()
    assert expected == "Ein Mann fährt auf einem Velo die Straße entlang."
    assert run_ordo(["translate", "-m", "en-de"], EN + "\n").strip() != expected
    open_page(driver, server)
    paste_glossary(driver, tsv)
    translate(driver, "en", "de", EN)
    wait_for(driver, lambda d: result_text(d) == expected, "the translation with the glossary's term")
    assert driver.find_element(By.ID, "glossary-count").text == "(1 term)"
    assert "with 1 glossary term" in driver.find_element(By.ID, "status").text
    assert console_errors(driver) == []


def test_a_glossary_line_without_a_tab_is_named_and_nothing_is_sent(server, driver):
    open_page(driver, server)
    count_requests(driver)
    Select(driver.find_element(By.ID, "source")).select_by_value("en")
    Select(driver.find_element(By.ID, "target")).select_by_value("de")
    paste_glossary(driver, "bicycle\tVelo\n\nstreet = Gasse\n")
    driver.find_element(By.ID, "text").send_keys(EN)
    message = driver.find_element(By.ID, "glossary-error")
    expected = "glossary line 3: expected 'source term<TAB>target term', found no tab"
    wait_for(driver, lambda d: message.is_displayed() and message.text == expected, "the message naming line 3")
    driver.find_element(By.ID, "translate").click()  # refused at once, before any request
    assert driver.find_element(By.ID, "glossary").get_attribute("aria-invalid") == "true"
    assert result_text(driver) == "" and not driver.find_element(By.ID, "error").is_displayed()
    assert driver.execute_script("return window.sentRequests") == []
    assert console_errors(driver) == []


def test_clearing_the_glossary_gives_the_plain_translation_again(server, driver, tmp_path):
    tsv = "bicycle\tVelo"
    with_term = run_ordo(["translate", "-m", "en-de", "--glossary", glossary_file(tmp_path, tsv + "\n")], EN + "\n").strip()
    plain = run_ordo(["translate", "-m", "en-de"], EN + "\n").strip()
    assert plain != with_term
    open_page(driver, server)
    paste_glossary(driver, tsv)
    translate(driver, "en", "de", EN)
    wait_for(driver, lambda d: result_text(d) == with_term, "the translation with the term")
    clear_glossary(driver)
    wait_for(driver, lambda d: result_text(d) == plain, "the plain translation after the box is emptied")
    assert driver.find_element(By.ID, "glossary-count").text == ""
    assert "glossary" not in driver.find_element(By.ID, "status").text
    assert console_errors(driver) == []


def test_the_words_view_shows_the_words_of_the_translation_with_the_glossary(server, driver, tmp_path):
    tsv = "bicycle\tVelo"
    line = json.loads(run_ordo(["translate", "-m", "en-de", "--glossary", glossary_file(tmp_path, tsv + "\n"), "--json",
                                "--alignment", "hard", "--alignment-words"], EN + "\n"))
    target_words = word_groups(line["tokens"])
    assert "Velo" in target_words
    open_page(driver, server)
    paste_glossary(driver, tsv)
    translate(driver, "en", "de", EN)
    wait_for(driver, lambda d: result_text(d) == line["text"], "the translation with the term")
    wait_for(driver, lambda d: d.find_element(By.ID, "attention").is_displayed(), "the words view")
    shown = driver.find_elements(By.CSS_SELECTOR, "#target-words .word")
    assert [w.text for w in shown] == target_words
    assert not driver.find_element(By.ID, "attention-whole").is_displayed()
    velo = target_words.index("Velo")
    ActionChains(driver).move_to_element(shown[velo]).perform()
    expected = sorted({s for s, t in line["alignment"] if t == velo})
    assert expected
    wait_for(driver, lambda d: highlighted_words(d) == expected, "Velo marks its source words", seconds=5)
    assert console_errors(driver) == []


def test_with_detect_language_the_glossary_applies_from_the_detected_language(server, driver, tmp_path):
    tsv = "Straße\troad"
    expected = run_ordo(["translate", "-m", "de-en", "--glossary", glossary_file(tmp_path, tsv + "\n")], DE + "\n").strip()
    assert expected != run_ordo(["translate", "-m", "de-en"], DE + "\n").strip()
    open_page(driver, server)
    paste_glossary(driver, tsv)
    translate(driver, "auto", "en", DE)
    wait_for(driver, lambda d: result_text(d) == expected, "the translation from the detected German, with the term")
    detected = driver.find_element(By.ID, "detected")
    assert detected.is_displayed() and detected.get_attribute("data-language") == "de"
    assert console_errors(driver) == []


def test_a_glossary_the_server_refuses_shows_its_400(server, driver):
    tsv = "bicycle\tVe\u0000lo"  # a NUL byte: the page sends it, the server refuses it
    status, answer = post(server, "/v1/translate", {"text": EN, "source_lang": "en", "target_lang": "de",
                                                    "glossary": {"bicycle": "Ve\u0000lo"}})
    assert status == 400 and "'glossary'" in answer["error"]
    open_page(driver, server)
    paste_glossary(driver, tsv)
    translate(driver, "en", "de", EN)
    error = driver.find_element(By.ID, "error")
    wait_for(driver, lambda d: error.is_displayed() and "(400)" in error.text, "the server's 400")
    assert error.text == "The server refused the request (400): " + answer["error"]
    assert not driver.find_element(By.ID, "glossary-error").is_displayed()
    assert [e for e in console_errors(driver) if " 400 " not in e["message"]] == []


def translate_file_on_page(driver, downloads, path, name):
    """Sends `path` from the Documents tab (the pickers already set), clicks its download link and
    waits (bounded) for the file `name` to arrive in `downloads`; its path."""
    driver.find_element(By.ID, "tab-documents").click()
    driver.find_element(By.ID, "file").send_keys(str(path))
    driver.find_element(By.ID, "translate-file").click()
    wait_for(driver, lambda d: d.find_element(By.ID, "download").is_displayed(), "the download link")
    link = driver.find_element(By.ID, "download")
    assert link.get_attribute("download") == name
    link.click()
    target = downloads / name
    deadline = time.monotonic() + WAIT
    while not (target.exists() and target.stat().st_size > 0) and time.monotonic() < deadline:
        time.sleep(0.1)
    return target


def test_an_html_document_comes_back_translated_with_its_markup(server, driver, downloads):
    page = '<!doctype html>\n<html><body>\n<p class="x">A man is riding a <b>red</b> bicycle.</p>\n' \
           '<p>A woman is playing the guitar.</p>\n</body></html>\n'
    expected = run_ordo(["translate", "-m", "en-de", "--format", "html"], page)
    with tempfile.TemporaryDirectory(prefix="ordo-web-upload-") as d:
        path = pathlib.Path(d) / "letter.html"
        path.write_text(page, encoding="utf-8")
        open_page(driver, server)
        Select(driver.find_element(By.ID, "source")).select_by_value("en")
        Select(driver.find_element(By.ID, "target")).select_by_value("de")
        got = translate_file_on_page(driver, downloads, path, "letter.de.html").read_text(encoding="utf-8")
    assert got == expected
    assert '<p class="x">' in got and "<b>" in got and "</b>" in got
    assert console_errors(driver) == []


def test_a_text_document_comes_back_translated_sentence_by_sentence(server, driver, downloads):
    text = EN + " A woman is playing the guitar.\n\nTwo dogs run on the beach.\n"
    expected = run_ordo(["translate", "-m", "en-de", "--format", "txt"], text)
    with tempfile.TemporaryDirectory(prefix="ordo-web-upload-") as d:
        path = pathlib.Path(d) / "notes.txt"
        path.write_text(text, encoding="utf-8")
        open_page(driver, server)
        Select(driver.find_element(By.ID, "source")).select_by_value("en")
        Select(driver.find_element(By.ID, "target")).select_by_value("de")
        got = translate_file_on_page(driver, downloads, path, "notes.de.txt").read_text(encoding="utf-8")
    # `ordo translate --format txt` (sentence by sentence, the blank line and line ends kept).
    assert got == expected and got.count("\n") == 3
    assert console_errors(driver) == []


def test_a_word_document_comes_back_as_the_command_line_translates_it(server, driver, downloads):
    docx = pytest.importorskip("docx")
    with tempfile.TemporaryDirectory(prefix="ordo-web-upload-") as d:
        source = docx.Document()
        source.add_paragraph(EN)
        p = source.add_paragraph("A woman is playing the ")
        p.add_run("red").bold = True
        p.add_run(" guitar.")
        path = pathlib.Path(d) / "letter.docx"
        source.save(str(path))
        expected = pathlib.Path(d) / "expected.docx"
        subprocess.run([ORDO, "translate", "-m", "en-de", "-q", "-i",
                        str(path), "-o", str(expected)], check=True)
        open_page(driver, server)
        Select(driver.find_element(By.ID, "source")).select_by_value("en")
        Select(driver.find_element(By.ID, "target")).select_by_value("de")
        assert ".docx" in driver.find_element(By.ID, "file").get_attribute("accept")
        target = translate_file_on_page(driver, downloads, path, "letter.de.docx")
        got = [(p.text, [r.text for r in p.runs if r.bold]) for p in docx.Document(str(target)).paragraphs]
        want = [(p.text, [r.text for r in p.runs if r.bold]) for p in docx.Document(str(expected)).paragraphs]
    assert got == want and got[1][1], got
    assert console_errors(driver) == []


def test_a_timeout_shows_the_servers_504(driver):
    s = Server("-m", "en-de", "--timeout", "0.01")
    try:
        driver.get(s.url + "/")
        wait_for(driver, lambda d: len(Select(d.find_element(By.ID, "target")).options) > 0, "language pickers")
        box = driver.find_element(By.ID, "text")
        box.send_keys(" ".join([EN] * 6))
        driver.find_element(By.ID, "translate").click()
        error = driver.find_element(By.ID, "error")
        wait_for(driver, lambda d: error.is_displayed() and "504" in error.text, "the 504")
        assert "took too long" in error.text and result_text(driver) == ""
        assert [e for e in console_errors(driver) if " 504 " not in e["message"]] == []
    finally:
        s.stop()


def test_the_summarization_tab_summarizes_like_the_command_line(server, driver):
    expected = run_ordo(["summarize", "-m", "dialogsum"], DIALOGUE + "\n").strip()
    open_page(driver, server)
    tab = driver.find_element(By.ID, "tab-summarize")
    wait_for(driver, lambda d: tab.is_displayed(), "the summarization tab (a summarization model is served)")
    tab.click()
    assert not driver.find_element(By.CSS_SELECTOR, ".langs").is_displayed()
    driver.find_element(By.ID, "summary-text").send_keys(DIALOGUE)
    driver.find_element(By.ID, "summarize").click()
    wait_for(driver, lambda d: d.find_element(By.ID, "summary").text == expected, "the summary")
    assert console_errors(driver) == []


def test_a_document_longer_than_the_model_is_summarized_in_parts(server, driver):
    root = pathlib.Path(__file__).resolve().parents[2]
    with open(root / "tests" / "data" / "samples" / "dialogsum_dev30.jsonl") as f:
        rows = [json.loads(line)["dialogue"] for line in f]
    document = "\n\n".join(rows[10:18])  # 1,775 tokens for a model of 512
    expected = run_ordo(["summarize", "-m", "dialogsum", "--document"], document + "\n").strip()
    open_page(driver, server)
    tab = driver.find_element(By.ID, "tab-summarize")
    wait_for(driver, lambda d: tab.is_displayed(), "the summarization tab")
    tab.click()
    box = driver.find_element(By.ID, "summary-text")
    driver.execute_script("arguments[0].value = arguments[1];"
                          "arguments[0].dispatchEvent(new Event('input'));", box, document)
    driver.find_element(By.ID, "summarize").click()
    wait_for(driver, lambda d: d.find_element(By.ID, "summary").text == expected, "the summary of every part")
    assert "Sara" in expected  # the last dialogue
    assert console_errors(driver) == []


def test_keyboard_alone_reaches_the_controls(server, driver):
    open_page(driver, server)
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    reached = set()
    for _ in range(25):
        reached.add(driver.switch_to.active_element.get_attribute("id"))
        driver.switch_to.active_element.send_keys(Keys.TAB)
    for control in ("source", "swap", "target", "text", "translate", "tab-translate"):
        assert control in reached, control
    # Every form control has a label a screen reader reads.
    unlabelled = driver.execute_script("""
        return [...document.querySelectorAll('select, textarea, input')].filter(e =>
          !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.id);""")
    assert unlabelled == []


def test_with_api_keys_the_page_asks_for_a_key_and_shows_403(driver, downloads):
    with tempfile.TemporaryDirectory(prefix="ordo-web-keys-") as d:
        keys = pathlib.Path(d) / "keys"
        keys.write_text("secret-1\n")
        s = Server("-m", "en-de", "--api-keys", str(keys), "--max-chars", "60")
        try:
            expected = run_ordo(["translate", "-m", "en-de"], EN + "\n").strip()
            driver.get(s.url + "/")
            driver.execute_script("sessionStorage.clear()")
            driver.get(s.url + "/")
            wait_for(driver, lambda d: d.find_element(By.ID, "key-form").is_displayed(), "the key form")
            # The server's limit is the count's.
            box = driver.find_element(By.ID, "text")
            box.send_keys("x" * 61)
            wait_for(driver, lambda d: d.find_element(By.ID, "count").text == "61 / 60", "the count")
            assert "over" in driver.find_element(By.ID, "count").get_attribute("class")
            assert not driver.find_element(By.ID, "translate").is_enabled()
            # A wrong key: the server's 403 is shown.
            driver.find_element(By.ID, "api-key").send_keys("wrong", Keys.ENTER)
            box.clear()
            box.send_keys(EN)
            error = driver.find_element(By.ID, "error")
            wait_for(driver, lambda d: error.is_displayed() and "403" in error.text, "the 403")
            assert "Invalid API key" in error.text
            # The right key: the translation.
            wait_for(driver, lambda d: d.find_element(By.ID, "key-form").is_displayed(), "the key form again")
            driver.find_element(By.ID, "api-key").send_keys("secret-1", Keys.ENTER)
            wait_for(driver, lambda d: result_text(d) == expected, "the translation with the key")
            assert not driver.find_element(By.ID, "error").is_displayed()
            assert driver.execute_script("return sessionStorage.getItem('ordo-api-key')") == "secret-1"
            # A text document longer than --max-chars (60) goes in pieces cut at line ends, with the key.
            text = EN + "\nA woman is playing the guitar.\nTwo dogs run on the beach.\n"
            expected_doc = run_ordo(["translate", "-m", "en-de", "--split-sentences"], text)
            path = pathlib.Path(d) / "long.txt"
            path.write_text(text, encoding="utf-8")
            target = translate_file_on_page(driver, downloads, path, "long.de.txt")
            assert target.read_text(encoding="utf-8") == expected_doc
            # The 403s were the server's answers (logged by the browser as failed loads), nothing else.
            errors = [e for e in console_errors(driver) if " 403 " not in e["message"]]
            assert errors == []
        finally:
            s.stop()


# ---------------------------------------------------------------- the speech tab
# The tiny random-weight Whisper of tests/data/hf/whisper: its words are garbage, so the page
# is compared with the server's own answer to the same upload (POST /v1/audio/*, verbose_json).
WHISPER = SOURCE_DIR / "tests" / "data" / "hf" / "whisper"
CLIP = WHISPER / "audio" / "en_16k.wav"
GERMAN_CLIP = WHISPER / "audio" / "de_16k.wav"


@pytest.fixture(scope="module")
def speech_server():
    s = Server("-m", "en-de", "-m", str(WHISPER))
    yield s
    s.stop()


def post_audio(server, route, path, fields):
    """A multipart upload of the file at `path` with `fields`, as the page sends it: (status, JSON)."""
    boundary = "ordo-web-test-boundary"
    body = b""
    for name, value in fields.items():
        body += ('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % (boundary, name, value)).encode()
    body += ('--%s\r\nContent-Disposition: form-data; name="file"; filename="%s"\r\n'
             'Content-Type: application/octet-stream\r\n\r\n' % (boundary, path.name)).encode()
    body += path.read_bytes() + ("\r\n--%s--\r\n" % boundary).encode()
    request = urllib.request.Request(server.url + route, data=body,
                                     headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def words_of(text):
    return " ".join(text.split())


def text_content(driver, element_id):
    """The element's text exactly as the page set it (the model's garbage words hold control
    characters, which an element's rendered .text leaves out)."""
    return driver.execute_script("return document.getElementById(arguments[0]).textContent", element_id)


def open_speech_tab(driver, server):
    open_page(driver, server)
    tab = driver.find_element(By.ID, "tab-speech")
    wait_for(driver, lambda d: tab.is_displayed(), "the speech tab (a speech model is served)")
    tab.click()
    assert driver.find_element(By.ID, "panel-speech").is_displayed()
    assert not driver.find_element(By.CSS_SELECTOR, ".langs").is_displayed()


def shown_segments(driver):
    return [(float(li.get_attribute("data-start")), float(li.get_attribute("data-end")),
             li.find_element(By.CSS_SELECTOR, ".time").text,
             li.find_element(By.CSS_SELECTOR, ".segment-text").get_attribute("textContent"))
            for li in driver.find_elements(By.CSS_SELECTOR, "#speech-segments li")]


def clock(seconds):
    """The page's m:ss.s."""
    tenths = int(seconds * 10 + 0.5)  # JavaScript's Math.round
    return "%d:%04.1f" % (tenths // 600, (tenths % 600) / 10)


def test_the_speech_tab_is_hidden_without_a_speech_model(server, driver):
    open_page(driver, server)
    wait_for(driver, lambda d: d.find_element(By.ID, "api-note").text.startswith("Models:"), "the models listed")
    assert not driver.find_element(By.ID, "tab-speech").is_displayed()


def test_an_uploaded_clip_shows_its_transcript_and_timed_segments(speech_server, driver):
    status, expected = post_audio(speech_server, "/v1/audio/transcriptions", CLIP,
                                  {"model": "whisper", "language": "en", "response_format": "verbose_json"})
    assert status == 200 and expected["segments"], expected
    open_speech_tab(driver, speech_server)
    Select(driver.find_element(By.ID, "speech-language")).select_by_value("en")
    driver.find_element(By.ID, "audio-file").send_keys(str(CLIP))
    driver.find_element(By.ID, "transcribe-file").click()
    wait_for(driver, lambda d: d.find_element(By.ID, "speech-result").is_displayed(), "the transcript")
    assert text_content(driver, "speech-text") == expected["text"]
    segments = shown_segments(driver)
    assert len(segments) == len(expected["segments"])
    for (start, end, time_text, text), want in zip(segments, expected["segments"]):
        assert (start, end) == (want["start"], want["end"])
        assert time_text == clock(want["start"]) + " – " + clock(want["end"])
        assert words_of(text) == words_of(want["text"])
    assert "English" in driver.find_element(By.ID, "speech-language-note").text
    assert driver.find_element(By.ID, "speech-status").text.startswith("Transcribed en_16k.wav in ")
    screenshot(driver, "speech-1280.png", 1280)
    screenshot(driver, "speech-360.png", 360)
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert console_errors(driver) == []


def test_the_translate_task_sends_the_clip_to_the_translations_route(speech_server, driver):
    status, expected = post_audio(speech_server, "/v1/audio/translations", GERMAN_CLIP,
                                  {"model": "whisper", "response_format": "verbose_json"})
    assert status == 200, expected
    open_speech_tab(driver, speech_server)
    Select(driver.find_element(By.ID, "speech-task")).select_by_value("translate")
    assert not driver.find_element(By.ID, "speech-language").is_enabled()  # the route takes none
    driver.find_element(By.ID, "audio-file").send_keys(str(GERMAN_CLIP))
    driver.find_element(By.ID, "transcribe-file").click()
    wait_for(driver, lambda d: d.find_element(By.ID, "speech-status").text.startswith("Translated de_16k.wav"),
             "the translation")
    assert text_content(driver, "speech-text") == expected["text"]
    assert driver.find_element(By.ID, "speech-text-label").text == "Translation into English"
    Select(driver.find_element(By.ID, "speech-task")).select_by_value("transcribe")
    assert console_errors(driver) == []


def test_a_file_that_is_not_audio_shows_the_servers_400(speech_server, driver):
    with tempfile.TemporaryDirectory(prefix="ordo-web-upload-") as d:
        path = pathlib.Path(d) / "notes.txt"
        path.write_text("this is not audio", encoding="utf-8")
        open_speech_tab(driver, speech_server)
        driver.find_element(By.ID, "audio-file").send_keys(str(path))
        driver.find_element(By.ID, "transcribe-file").click()
        error = driver.find_element(By.ID, "error")
        wait_for(driver, lambda d: error.is_displayed() and "400" in error.text, "the 400")
    assert "notes.txt" in error.text
    assert [e for e in console_errors(driver) if " 400 " not in e["message"]] == []
    driver.execute_script("document.getElementById('error').hidden = true")


def test_a_server_of_only_a_speech_model_opens_on_the_speech_tab(driver):
    s = Server("-m", str(WHISPER))
    try:
        driver.get(s.url + "/")
        wait_for(driver, lambda d: d.find_element(By.ID, "panel-speech").is_displayed(), "the speech tab")
        assert driver.find_element(By.ID, "tab-speech").get_attribute("aria-selected") == "true"
        assert not driver.find_element(By.ID, "speech-model-field").is_displayed()  # one model: no picker
    finally:
        s.stop()


def test_a_recording_from_the_microphone_is_transcribed(speech_server, downloads):
    # Chromium's fake capture device plays the clip as the microphone; its recorder makes webm/opus.
    options = webdriver.ChromeOptions()
    chromium = "/usr/lib/chromium/chromium"
    if os.path.exists(chromium):
        options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900", "--no-first-run", "--disable-extensions", "--lang=en-US",
                 "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                 "--use-file-for-fake-audio-capture=%s" % CLIP, "--autoplay-policy=no-user-gesture-required"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_page_load_timeout(WAIT)
        open_speech_tab(driver, speech_server)
        record = driver.find_element(By.ID, "record")
        record.click()
        wait_for(driver, lambda d: record.get_attribute("aria-pressed") == "true", "the recording to start")
        # Recording takes the time it records: until the page's clock says 2 s.
        wait_for(driver, lambda d: d.find_element(By.ID, "speech-status").text >= "Recording 0:02.0",
                 "two seconds recorded")
        record.click()
        wait_for(driver, lambda d: d.find_element(By.ID, "speech-status").text.startswith("Transcribed recording.webm"),
                 "the recording transcribed")
        note = driver.find_element(By.ID, "speech-language-note").text
        assert note.startswith("(spoken: "), note
        assert record.get_attribute("aria-pressed") == "false"
        assert console_errors(driver) == []
    finally:
        driver.quit()

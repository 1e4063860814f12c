"""Take the README's screenshot of the web table (docs/img/web_table.png).

Starts ``truco serve`` on a free port (records and the exported policy in a temporary folder), opens the page in
headless Chromium at a phone's size, plays a few seeded moves by clicking, and saves the page once a hand is
under way. Needs what the browser test needs: Debian's ``chromium`` and ``chromium-driver``, selenium, and
``npm ci --prefix frontends/web``.

    python scripts/web_screenshot.py [--out docs/img/web_table.png] [--preset paulista] [--moves 5]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "img" / "web_table.png"))
    parser.add_argument("--preset", default="paulista")
    parser.add_argument("--seed", type=int, default=4, help="seed of the deals and of the moves played")
    parser.add_argument("--moves", type=int, default=5, help="the person's moves before the screenshot")
    parser.add_argument("--size", default="390,844", help="screen width,height in CSS pixels (a phone's)")
    parser.add_argument("--scale", type=float, default=2, help="device pixels per CSS pixel (default 2)")
    args = parser.parse_args()
    driver_path = shutil.which("chromedriver")
    if driver_path is None:
        print("web_screenshot: chromedriver is not on PATH (apt-get install chromium chromium-driver)",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(
            [sys.executable, "-m", "training.cli", "serve", "--preset", args.preset, "--port", "0",
             "--seed", str(args.seed), "--records", f"{tmp}/records", "--cache", f"{tmp}/cache"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        driver = None
        try:
            url = None
            for line in server.stdout:
                match = re.search(r"on (http://\S+/)", line)
                if match:
                    url = match.group(1)
                    break
            if url is None:
                print("web_screenshot: truco serve did not start", file=sys.stderr)
                return 1
            options = webdriver.ChromeOptions()
            for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                        "--hide-scrollbars"):
                options.add_argument(arg)
            driver = webdriver.Chrome(service=Service(driver_path), options=options)
            width, height = (int(x) for x in args.size.split(","))
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": width, "height": height, "deviceScaleFactor": args.scale, "mobile": True})
            driver.get(url + "?botDelay=0")
            body = driver.find_element(By.TAG_NAME, "body")
            wait = WebDriverWait(driver, 60, poll_frequency=0.05)
            rng = random.Random(args.seed)
            position = ""
            for move in range(args.moves + 1):
                wait.until(lambda _, at=position: body.get_attribute("data-state") in ("human", "over")
                           and body.get_attribute("data-position") != at)
                position = body.get_attribute("data-position")
                buttons = driver.find_elements(By.CSS_SELECTOR, "#actions button[data-action]")
                if move == args.moves or not buttons:
                    break
                rng.choice(buttons).click()
            time.sleep(0.3)
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(args.out)
            print(f"web_screenshot: wrote {args.out}")
        finally:
            if driver is not None:
                driver.quit()
            server.terminate()
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())

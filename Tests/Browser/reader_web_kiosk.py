"""The reader's web kiosk in headless Chromium (Debian's chromium + chromium-driver, Selenium).

A reader follows a hashQuiosc link from the app into the web kiosk signed in, checks the account page,
moves by keyboard, opens an edition's archive and an issue, downloads a PDF, and, once the subscription
has ended (the command given runs the CLI), is refused the same subscribers' issue.

Usage: reader_web_kiosk.py BASE_URL RPC_URL SCREENSHOT_DIR END_SUBSCRIPTION_COMMAND_JSON
Prints a JSON report; exits non-zero on any failed step.
"""
import json, subprocess, sys, urllib.request, xmlrpc.client
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

base, rpc, shots, end_subscription = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
report = {}

def browser(language):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000", f"--lang={language}"]:
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)

def navigating(driver, element):
    """Clicks `element` and waits until the page it leads to has replaced this one."""
    page = driver.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(driver, 10).until(EC.staleness_of(page))

def images_loaded(driver):
    return driver.execute_script(
        "return [...document.images].map(i => i.complete && i.naturalWidth > 0)")

server = xmlrpc.client.ServerProxy(rpc)
link = server.epusuaris.hashQuiosc("quiosc", "anna", "anna-password", "compte")
report["hash_url"] = link["url"].split("?")[0]

driver = browser("ca")
try:
    wait = WebDriverWait(driver, 10)
    driver.get(link["url"])
    report["account_url"] = driver.current_url
    report["account_heading"] = driver.find_element(By.TAG_NAME, "h1").text
    report["signed_in_as"] = driver.find_element(By.CSS_SELECTOR, "header .who strong").text
    report["subscriptions"] = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr")]
    report["cookie_http_only"] = [c["httpOnly"] for c in driver.get_cookies() if c["name"] == "kiosk_reader"]

    # Keyboard: the first Tab reaches the skip link, Enter on it moves focus to the main content.
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    report["first_focus"] = driver.switch_to.active_element.text
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    report["after_skip"] = driver.switch_to.active_element.get_attribute("id")

    # The shelf, by the header's link; every cover loads.
    navigating(driver, driver.find_element(By.LINK_TEXT, "El Quiosc"))
    report["shelf_editions"] = [h.text for h in driver.find_elements(By.CSS_SELECTOR, ".grid h3")]
    report["shelf_covers_loaded"] = images_loaded(driver)

    # An edition's archive, then its issue.
    navigating(driver, driver.find_element(By.LINK_TEXT, "El Punt Avui · Nacional"))
    report["archive_heading"] = driver.find_element(By.TAG_NAME, "h1").text
    report["archive_month"] = driver.find_element(By.ID, "month").text
    navigating(driver, driver.find_element(By.CSS_SELECTOR, ".grid a"))
    report["issue_heading"] = driver.find_element(By.TAG_NAME, "h1").text
    wait.until(lambda d: all(images_loaded(d)))
    report["issue_pages"] = len(driver.find_elements(By.CSS_SELECTOR, "ol.grid li"))
    report["issue_images_loaded"] = images_loaded(driver)
    report["page_bytes"] = len(driver.page_source.encode())
    driver.save_screenshot(f"{shots}/reader-issue.png")
    issue_url = driver.current_url

    # A PDF, as the link offers it.
    pdf_url = driver.find_element(By.CSS_SELECTOR, "a.pdf").get_attribute("href")
    with urllib.request.urlopen(pdf_url) as answer:
        report["pdf"] = [answer.status, answer.headers.get("Content-Type"), answer.read(5).decode("latin-1")]

    # A phone's width: nothing wider than the window.
    driver.set_window_size(390, 844)
    report["phone_overflow"] = driver.execute_script(
        "return document.documentElement.scrollWidth > document.documentElement.clientWidth")
    driver.save_screenshot(f"{shots}/reader-issue-phone.png")

    # The subscription ends; the same issue is refused on the next visit.
    ended = subprocess.run(end_subscription, capture_output=True, text=True)
    report["end_subscription_status"] = ended.returncode
    driver.set_window_size(1280, 1000)
    driver.get(issue_url)
    report["after_end_heading"] = driver.find_element(By.TAG_NAME, "h1").text
    report["after_end_pdf_links"] = len(driver.find_elements(By.CSS_SELECTOR, "a.pdf"))
finally:
    driver.quit()

# An English reader, anonymous.
driver = browser("en")
try:
    driver.get(base + "/web/quiosc/")
    report["english_lang"] = driver.find_element(By.TAG_NAME, "html").get_attribute("lang")
    report["english_intro"] = driver.find_element(By.CSS_SELECTOR, "main p").text
finally:
    driver.quit()

print(json.dumps(report))

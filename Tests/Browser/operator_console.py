"""The operator console in headless Chromium (Debian's chromium + chromium-driver, Selenium), with two
Kiosk instances on one database: every change made in the console on instance A is what a reader app,
through Python's xmlrpc.client, gets from instance B at once.

Usage: operator_console.py CONSOLE_URL RPC_URL_OF_THE_OTHER_INSTANCE ARCHIVE SCREENSHOT_DIR
Prints a JSON report; exits non-zero on any failed step.
"""
import json, sys, xmlrpc.client
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

console, rpc_url, archive, shots = sys.argv[1:5]
other = xmlrpc.client.ServerProxy(rpc_url)
report = {}

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1100", "--lang=ca"]:
    options.add_argument(argument)
options.add_experimental_option("prefs", {"intl.accept_languages": "ca"})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, 20)

def navigating(element):
    """Clicks `element` and waits until the page it leads to has replaced this one. Chromium may say a replaced
    node "does not belong to the document" instead of calling it stale: that is replaced too."""
    page = driver.find_element(By.TAG_NAME, "html")
    element.click()

    def replaced(_):
        try:
            page.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return True
            raise
    wait.until(replaced)

def set_value(element_id, value):
    driver.execute_script("document.getElementById(arguments[0]).value = arguments[1]", element_id, value)

try:
    # Sign in.
    driver.get(console + "/admin")
    report["sign_in_url"] = driver.current_url
    driver.find_element(By.ID, "username").send_keys("marta")
    driver.find_element(By.ID, "password").send_keys("console-password")
    navigating(driver.find_element(By.CSS_SELECTOR, "form button[type=submit]"))
    report["dashboard_heading"] = driver.find_element(By.TAG_NAME, "h1").text
    report["dashboard_total"] = driver.find_element(By.ID, "total").text
    report["chart_bars"] = len(driver.find_elements(By.CSS_SELECTOR, "svg.chart rect"))
    driver.save_screenshot(f"{shots}/console-dashboard.png")

    # Lower an app's demo quota; the other instance grants accordingly at once.
    navigating(driver.find_element(By.LINK_TEXT, "Aplicacions"))
    quota = driver.find_element(By.ID, "quota-quiosc")
    quota.clear()
    quota.send_keys("1")
    navigating(quota.find_element(By.XPATH, "./ancestor::form").find_element(By.CSS_SELECTOR, "button[type=submit]"))
    report["quota_after"] = driver.find_element(By.ID, "quota-quiosc").get_attribute("value")
    first = other.epusuaris.consumirDemo("quiosc", "browser-device-1", "", {}, "ios", 0)
    second = other.epusuaris.consumirDemo("quiosc", "browser-device-1", first["iden_key"], {}, "ios", 0)
    report["demos_granted"] = [first["servir_demo"], second["servir_demo"]]

    # A forged form (no CSRF token), sent with the operator's own cookies, is refused.
    report["forged_status"] = driver.execute_async_script("""
        const done = arguments[0];
        fetch('/admin/apps/quiosc', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'},
                                     body: 'action=quota&demo_quota=9'}).then(r => done(r.status));""")

    # Upload an issue with the progress bar; a reader app sees it on the other instance; withdraw it.
    driver.get(console + "/admin/issues?edition=8")
    set_value("upload-date", "2025-07-01")
    driver.find_element(By.ID, "upload-file").send_keys(archive)
    driver.find_element(By.CSS_SELECTOR, "#upload button[type=submit]").click()
    wait.until(lambda d: d.find_element(By.ID, "upload").get_attribute("data-done"))
    report["upload_status"] = driver.find_element(By.ID, "upload").get_attribute("data-done")
    report["progress"] = driver.find_element(By.ID, "upload-progress").get_attribute("value")
    report["phases"] = driver.find_element(By.ID, "upload").get_attribute("data-phases")
    report["newest_after_upload"] = other.epquiosc.getDarrersEdicio("quiosc", "", 8, "", 1, "DESC")[0]["data"]
    navigating(driver.find_element(By.ID, "upload-refresh"))
    navigating(driver.find_element(By.CSS_SELECTOR, "#issue-2025-07-01 button[type=submit]"))
    report["listed_after_withdraw"] = driver.find_element(By.ID, "issue-2025-07-01").get_attribute("class")
    report["newest_after_withdraw"] = other.epquiosc.getDarrersEdicio("quiosc", "", 8, "", 1, "DESC")[0]["data"]
    navigating(driver.find_element(By.CSS_SELECTOR, "#issue-2025-07-01 button[type=submit]"))
    report["class_after_restore"] = driver.find_element(By.ID, "issue-2025-07-01").get_attribute("class")
    report["newest_after_restore"] = other.epquiosc.getDarrersEdicio("quiosc", "", 8, "", 1, "DESC")[0]["data"]

    # Add a reader and a subscription; registrar on the other instance returns it.
    navigating(driver.find_element(By.LINK_TEXT, "Lectors"))
    driver.find_element(By.ID, "new-username").send_keys("nuria")
    driver.find_element(By.ID, "new-name").send_keys("Núria Pons")
    driver.find_element(By.ID, "new-password").send_keys("nuria-password")
    navigating(driver.find_element(By.ID, "new-password").find_element(By.XPATH, "./ancestor::form").find_element(By.CSS_SELECTOR, "button"))
    Select(driver.find_element(By.ID, "edition-nuria")).select_by_visible_text("1")
    set_value("until-nuria", "2030-12-31")
    navigating(driver.find_element(By.ID, "until-nuria").find_element(By.XPATH, "./ancestor::form").find_element(By.CSS_SELECTOR, "button"))
    report["reader_row"] = driver.find_element(By.CSS_SELECTOR, "#reader-nuria .subscriptions").text
    signed = other.epusuaris.registrar("quiosc", "browser-device-2", "nuria", "nuria-password", {}, "ios")
    report["registrar"] = [signed["name"], signed["edicions"].get("1", {}).get("fins", "")]

    # A store purchase, found by a device it opens on, revoked by hand.
    navigating(driver.find_element(By.LINK_TEXT, "Compres"))
    driver.find_element(By.ID, "p-device").send_keys("browser-buyer")
    navigating(driver.find_element(By.ID, "p-device").find_element(By.XPATH, "./ancestor::form").find_element(By.CSS_SELECTOR, "button"))
    rows = driver.find_elements(By.CSS_SELECTOR, "tr.purchase")
    report["purchases_found"] = [row.get_attribute("data-id") for row in rows]
    navigating(rows[0].find_element(By.TAG_NAME, "a"))
    report["purchase_devices"] = driver.find_element(By.ID, "devices").text
    navigating(driver.find_element(By.CSS_SELECTOR, "input[name=action][value=revoke] + button"))
    report["purchase_state"] = driver.find_element(By.ID, "state").text
    driver.save_screenshot(f"{shots}/console-purchase.png")

    # A webhook endpoint: its secret shown once, then only that one is set.
    navigating(driver.find_element(By.LINK_TEXT, "Webhooks"))
    set_value("w-name", "Redacció")
    set_value("w-url", "https://hooks.example.com/kiosk")
    driver.find_element(By.NAME, "type_issue.published").click()
    navigating(driver.find_element(By.ID, "w-url").find_element(By.XPATH, "./ancestor::form").find_element(By.CSS_SELECTOR, "button[type=submit]"))
    report["webhook_secret"] = driver.find_element(By.ID, "secret-value").text
    driver.save_screenshot(f"{shots}/console-webhooks.png")
    navigating(driver.find_element(By.LINK_TEXT, "Webhooks"))
    report["webhook_types"] = driver.find_element(By.CSS_SELECTOR, "tr.webhook .types").text
    report["webhook_secret_again"] = report["webhook_secret"] in driver.page_source

    # The audit log shows every change.
    navigating(driver.find_element(By.LINK_TEXT, "Registre de canvis"))
    report["audit"] = [row.find_elements(By.TAG_NAME, "td")[2].text for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr")]
    report["page_bytes"] = len(driver.page_source.encode())
finally:
    driver.quit()

print(json.dumps(report))

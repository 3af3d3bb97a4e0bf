/** Debian's Chromium driven by playwright-core (scripts/ensure-chromium.sh installs it). */

import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: run scripts/ensure-chromium.sh (or set CHROMIUM_PATH)`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

/** The attribute of the first element matching `selector`, waiting for the element to exist. */
export async function attr(page: Page, selector: string, name: string): Promise<string | null> {
  return page.locator(selector).first().getAttribute(name);
}

/** Waits until the element exists and its attribute has the value (the page updates itself). */
export async function waitForAttr(
  page: Page,
  selector: string,
  name: string,
  value: string,
  timeout = 30_000,
): Promise<void> {
  await page.waitForSelector(`${selector}[${name}="${value}"]`, { timeout, state: 'attached' });
}

// What the console's browser tests share: Chromium (playwright-core, /usr/bin/chromium), a page that records
// requests to other origins, CSP violations and page errors, axe-core in both themes, and screenshots.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'

const CHROMIUM = process.env.TANDEM_TEST_CHROMIUM ?? '/usr/bin/chromium'
export const ARTEFACTS = 'test-results/console'
const AXE_SOURCE = readFileSync('node_modules/axe-core/axe.min.js', 'utf8')

export async function launch(): Promise<Browser> {
  // Fail, never skip: CI must have Chromium (apt-get install -y chromium).
  assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}: the console's browser tests cannot run`)
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
}

export async function openPage(browser: Browser, base: string, viewport = { width: 1200, height: 850 }) {
  const context = await browser.newContext({ baseURL: base, viewport, reducedMotion: 'reduce', colorScheme: 'light' })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('request', (request) => {
    if (!request.url().startsWith(base) && !request.url().startsWith('data:') && !request.url().startsWith(`blob:${base}`)) problems.push(`request to another origin: ${request.url()}`)
  })
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) problems.push(`CSP: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  return { page, problems, close: () => context.close() }
}

async function assertAccessible(page: Page, where: string) {
  await page.evaluate(AXE_SOURCE)
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] })
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`)
  })
  assert.deepEqual(violations, [], `axe on ${where}`)
}

export async function shoot(page: Page, name: string, dir = ARTEFACTS) {
  mkdirSync(dir, { recursive: true })
  await page.screenshot({ path: `${dir}/${name}.png` }).catch(() => {})
}

/** axe in the light and the dark theme; with `picture`, docs/{picture}.png and docs/{picture}-dark.png of the viewport. */
export async function checkPage(page: Page, where: string, picture?: string) {
  const original = await page.evaluate(() => (globalThis as any).document.documentElement.dataset.theme ?? null)
  for (const theme of ['light', 'dark']) {
    await page.evaluate((t) => { (globalThis as any).document.documentElement.dataset.theme = t }, theme)
    await assertAccessible(page, `${where} (${theme} theme)`)
    if (picture) await page.screenshot({ path: `docs/${picture}${theme === 'dark' ? '-dark' : ''}.png` })
  }
  await page.evaluate((t) => {
    const root = (globalThis as any).document.documentElement
    if (t === null) delete root.dataset.theme
    else root.dataset.theme = t
  }, original)
}

// The Scorecards pages in real Chromium against a real Tandem with a history of decisions: the table of agent
// scorecards (sortable column header buttons with aria-sort, a chart per row), the filters and the CSV button, the
// detail with its series charts and its table by cycle and phase; axe-core in both themes; no CSP violation and no
// request to another origin. With TANDEM_TEST_SCREENSHOTS=1 (or TANDEM_UPDATE_SCREENSHOT=1) screenshots go to test-results/console/ (docs/scorecards.png is one of them).
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { browserDialects, build } from '../helpers.js'
import { buildHistory, type History } from '../insights/history.js'

const CHROMIUM = process.env.TANDEM_TEST_CHROMIUM ?? '/usr/bin/chromium'
const ARTEFACTS = 'test-results/console'
const AXE_SOURCE = readFileSync('node_modules/axe-core/axe.min.js', 'utf8')
const WAIT = { timeout: 10000 }

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

async function checkBothThemes(page: Page, where: string, shot: string) {
  for (const theme of ['light', 'dark']) {
    await page.evaluate((t) => { (globalThis as any).document.documentElement.dataset.theme = t }, theme)
    await assertAccessible(page, `${where} (${theme} theme)`)
    if (process.env.TANDEM_TEST_SCREENSHOTS !== '1' && process.env.TANDEM_UPDATE_SCREENSHOT !== '1') continue
    mkdirSync(ARTEFACTS, { recursive: true })
    await page.screenshot({ path: `${ARTEFACTS}/${shot}-${theme}.png`, fullPage: true })
  }
}

for (const dialect of browserDialects()) {
  describe(`console scorecards (${dialect})`, () => {
    let app: FastifyInstance
    let browser: Browser
    let base: string
    let h: History
    before(async () => {
      assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}`)
      app = await build(dialect)
      h = await buildHistory(app)
      base = await app.listen({ port: 0, host: '127.0.0.1' })
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] })
    })
    after(async () => {
      await browser?.close()
      await app.close()
    })

    it('the table, sorting, the charts, the detail; accessible in both themes, within the CSP', async () => {
      const context = await browser.newContext({ baseURL: base, viewport: { width: 1400, height: 900 }, reducedMotion: 'reduce' })
      const page = await context.newPage()
      const problems: string[] = []
      page.on('request', (r) => {
        if (!r.url().startsWith(base) && !r.url().startsWith('data:') && !r.url().startsWith(`blob:${base}`)) problems.push(`request to another origin: ${r.url()}`)
      })
      page.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`)
      })
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
      try {
        await page.goto('/')
        await page.getByRole('link', { name: 'Scorecards' }).click()
        const table = page.getByRole('table', { name: 'Agent scorecards' })
        await table.waitFor(WAIT)
        await page.getByRole('row', { name: /Writer/ }).waitFor(WAIT)
        assert.equal(await page.locator('th[aria-sort="descending"]').getByRole('button').textContent(), 'Answered')
        await page.getByRole('button', { name: 'Expired' }).click()
        await page.locator('th[aria-sort="descending"]', { hasText: 'Expired' }).waitFor(WAIT)
        await page.getByRole('button', { name: 'Expired' }).click()
        await page.locator('th[aria-sort="ascending"]', { hasText: 'Expired' }).waitFor(WAIT)
        await page.locator('.sparkline canvas').first().waitFor(WAIT)
        assert.ok(await page.getByRole('button', { name: 'Download CSV' }).isVisible())
        await checkBothThemes(page, '/insights', 'scorecards')
        await page.getByRole('link', { name: 'Writer' }).click()
        await page.getByRole('table', { name: 'By cycle and phase' }).waitFor(WAIT)
        assert.match(page.url(), new RegExp(`/insights/agents/${h.writerId}$`))
        await page.locator('.scorecard-chart canvas').first().waitFor(WAIT)
        assert.equal(await page.getByRole('row', { name: /write phase/ }).count(), 1)
        await checkBothThemes(page, '/insights/agents/:id', 'scorecard-detail')
        assert.deepEqual(problems, [])
      } finally {
        await context.close()
      }
    })
  })
}

// The console for operators at volume, in real Chromium at 1440×900 against a real Tandem on each database:
// the inbox as list + details (at least 10 whole rows, the current row, keyboard triage and bulk approve checked
// through the API, a failed item kept selected with its detail, filters in the URL), runs newest first as one-line
// rows with permalinks past the first page and Retry, a failed answer in the chat with Retry, a save's warnings
// kept, automation naming no saved cycle, cron in words, the MCP servers page against a local MCP server, and
// providers and initials in words. axe in both themes on each view; with TANDEM_UPDATE_SCREENSHOT=1 the views'
// pictures are written to docs/. One browser for the file.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { browserDialects, build, send } from '../helpers.js'
import { waitFor } from '../wait.js'
import { downMcpUrl, startFakeMcpServer } from '../fakes/mcp-server.js'
import { checkPage, launch, openPage, shoot } from './kit.js'

const WAIT = { timeout: 10000 }
const NIL = '00000000-0000-0000-0000-000000000000'
const VIEWPORT = { width: 1440, height: 900 }

function step(t: TestContext, page: () => Page, name: string, fn: () => Promise<void>) {
  return t.test(name, async () => {
    try {
      await fn()
    } catch (error) {
      await shoot(page(), `failed-${name.replace(/\W+/g, '-')}`)
      throw error
    }
  })
}

/** A people's phase gated on @local (the key-less caller). */
const gate = (id: string, phaseName: string) => ({ id, agentId: NIL, phaseName, goal: `${phaseName}: refund order ${id.slice(-3)} of 40 EUR to the customer, as agreed on the phone`, instructions: '', autoAdvance: false, operatorPool: ['local'] })

test('the console at volume in Chromium', async (t) => {
  const browser: Browser = await launch()
  t.after(() => browser.close())

  for (const dialect of browserDialects()) {
    await t.test(dialect, async (t) => {
      const app = await build(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' }, { ownDatabase: true })
      t.after(() => app.close())
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      const { page, problems, close } = await openPage(browser, url, VIEWPORT)
      t.after(close)
      const current = () => page
      const docs = dialect === browserDialects()[0] && process.env.TANDEM_UPDATE_SCREENSHOT === '1'
      const look = (where: string, picture: string) => checkPage(page, where, docs ? picture : undefined)

      const refunds = (await send(app, 'POST', '/api/streams', { name: 'Refunds' })).json()
      const billing = (await send(app, 'POST', '/api/streams', { name: 'Billing' })).json()
      const refundCycle = (await send(app, 'POST', `/api/cycles/streams/${refunds.id}/cycles`, { triggerName: 'refund', description: 'Refund an order', phasesTemplate: [gate('01890a5d-ac96-774b-bcce-b30209900001', 'Approve refund')] })).json()
      const billingCycle = (await send(app, 'POST', `/api/cycles/streams/${billing.id}/cycles`, { triggerName: 'invoice', description: '', phasesTemplate: [gate('01890a5d-ac96-774b-bcce-b30209900002', 'Check invoice')] })).json()
      for (let i = 0; i < 9; i++) assert.equal((await send(app, 'POST', `/api/cycles/streams/${refunds.id}/cycles/${refundCycle.id}/runs`, { input: { order: i } })).statusCode, 201)
      for (let i = 0; i < 4; i++) assert.equal((await send(app, 'POST', `/api/cycles/streams/${billing.id}/cycles/${billingCycle.id}/runs`, {})).statusCode, 201)
      const inboxNow = async () => (await send(app, 'GET', '/api/me/inbox?limit=100')).json().data as any[]
      await waitFor(async () => (await inboxNow()).length >= 13, { timeoutMs: 5000, what: 'the 13 gates in the inbox' })
      const decisionsOf = async (runId: string) => (await send(app, 'GET', `/api/runs/${runId}`)).json().phases[0].decisions.map((d: any) => d.decision)

      await step(t, current, `${dialect} inbox: at least 10 rows beside the details; j/k, a, d with a confirmation, Enter`, async () => {
        await page.goto('/inbox')
        const list = page.getByRole('list', { name: 'Waiting for me' })
        const rows = list.getByRole('listitem')
        await rows.nth(12).waitFor(WAIT)
        const boxes = await rows.evaluateAll((els) => els.map((el) => el.getBoundingClientRect()).map((r) => ({ top: r.top, bottom: r.bottom })))
        assert.ok(boxes.filter((b) => b.top >= 0 && b.bottom <= 900).length >= 10, `at least 10 whole rows visible at 1440×900 (${JSON.stringify(boxes.slice(0, 3))})`)
        const details = page.getByRole('region', { name: 'Details' })
        await details.getByRole('link', { name: 'Open run' }).waitFor(WAIT)
        const items = await inboxNow()
        assert.equal(await rows.nth(0).getAttribute('aria-current'), 'true', 'the first item is current on load')
        await look('inbox, list and details', 'console-inbox-volume')
        // j moves on; a approves the current item (checked through the API); the next one becomes current.
        await page.keyboard.press('j')
        await rows.nth(1).and(page.locator('[aria-current="true"]')).waitFor(WAIT)
        await page.keyboard.press('k')
        await rows.nth(0).and(page.locator('[aria-current="true"]')).waitFor(WAIT)
        await page.keyboard.press('ArrowDown')
        await rows.nth(1).and(page.locator('[aria-current="true"]')).waitFor(WAIT)
        await page.keyboard.press('a')
        await rows.nth(11).waitFor({ state: 'visible', ...WAIT })
        await waitFor(async () => (await decisionsOf(items[1].runId)).length > 0, { timeoutMs: 5000, what: 'the approve to be recorded' })
        assert.deepEqual(await decisionsOf(items[1].runId), ['approve'])
        await rows.nth(12).waitFor({ state: 'detached', ...WAIT })
        assert.equal(await rows.nth(1).getAttribute('aria-current'), 'true', 'the next item is current after an action')
        await details.getByText(items[2].summary).waitFor(WAIT)
        // d on a decision asks to confirm the reject.
        await page.keyboard.press('d')
        const confirm = details.getByRole('alertdialog', { name: 'Reject this phase?' })
        await confirm.waitFor(WAIT)
        await confirm.getByRole('button', { name: 'Reject phase' }).click()
        await rows.nth(10).waitFor({ state: 'visible', ...WAIT })
        await rows.nth(11).waitFor({ state: 'detached', ...WAIT })
        assert.deepEqual(await decisionsOf(items[2].runId), ['reject'])
        // c focuses the note (Request changes needs one).
        await page.keyboard.press('c')
        assert.equal(await details.getByRole('textbox', { name: 'Note' }).evaluate((el) => el === (globalThis as any).document.activeElement), true)
        await page.keyboard.press('Escape')
        await page.evaluate(() => (globalThis as any).document.activeElement?.blur())
        // The keys are listed under "?".
        await page.keyboard.press('?')
        const shortcuts = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
        await shortcuts.getByText('Inbox: approve the selected items').waitFor(WAIT)
        await page.keyboard.press('Escape')
        await shortcuts.waitFor({ state: 'hidden', ...WAIT })
      })

      await step(t, current, `${dialect} inbox: bulk approve, one call each, a failure kept selected with its detail`, async () => {
        const rows = page.getByRole('list', { name: 'Waiting for me' }).getByRole('listitem')
        const before = await inboxNow()
        // Shift+click selects a range; Esc unselects.
        await rows.nth(0).getByRole('checkbox').click()
        await rows.nth(3).getByRole('checkbox').click({ modifiers: ['Shift'] })
        await page.getByRole('button', { name: 'Approve selected (4)' }).waitFor(WAIT)
        await page.evaluate(() => (globalThis as any).document.activeElement?.blur())
        await page.keyboard.press('Escape')
        await page.getByRole('button', { name: 'Approve selected', exact: true }).waitFor(WAIT)
        // x on three rows; the third's decision is refused (a 409 from the API, simulated on the wire).
        const refused = before[2]
        await page.route(`**/api/runs/${refused.runId}/phases/*/decision`, (route) => route.fulfill({ status: 409, contentType: 'application/problem+json', json: { type: 'urn:tandem:problem:not-awaiting-decision', title: 'The phase is not awaiting a decision', status: 409, detail: 'Someone decided it a moment ago.' } }))
        await rows.nth(0).click()
        await page.keyboard.press('x')
        await page.keyboard.press('j')
        await page.keyboard.press('x')
        await page.keyboard.press('j')
        await page.keyboard.press('x')
        await page.getByRole('button', { name: 'Approve selected (3)' }).waitFor(WAIT)
        await page.keyboard.press('Shift+A')
        await page.getByRole('status').filter({ hasText: '2 approved, 1 failed' }).waitFor(WAIT)
        assert.deepEqual(await decisionsOf(before[0].runId), ['approve'])
        assert.deepEqual(await decisionsOf(before[1].runId), ['approve'])
        assert.deepEqual(await decisionsOf(refused.runId), [])
        const failed = rows.filter({ hasText: 'Someone decided it a moment ago.' })
        await failed.waitFor(WAIT)
        assert.equal(await failed.getByRole('checkbox').isChecked(), true, 'a failed item stays listed and selected')
        await page.unroute(`**/api/runs/${refused.runId}/phases/*/decision`)
        await look('inbox after a bulk approve', 'console-inbox-bulk')
        await page.keyboard.press('Escape')
      })

      await step(t, current, `${dialect} inbox: filters by kind, stream and claimed by me, kept in the URL`, async () => {
        const rows = page.getByRole('list', { name: 'Waiting for me' }).getByRole('listitem')
        await page.getByRole('combobox', { name: 'Stream' }).fill('Billing')
        await page.waitForURL(`**/inbox?stream=${billing.id}`)
        await page.getByRole('list', { name: 'Waiting for me' }).getByRole('listitem').first().filter({ hasText: 'Billing' }).waitFor(WAIT)
        assert.equal(await rows.filter({ hasText: 'Refunds' }).count(), 0)
        assert.equal(await rows.count(), (await inboxNow()).filter((i) => i.streamId === billing.id).length)
        await page.getByRole('combobox', { name: 'Kind' }).selectOption({ label: 'Questions' })
        await page.waitForURL(`**/inbox?kind=question&stream=${billing.id}`)
        await page.getByText('Nothing matches these filters.').waitFor(WAIT)
        // A link with the filters opens them.
        const claim = (await inboxNow()).find((i) => i.streamId === refunds.id)
        assert.equal((await send(app, 'POST', `/api/runs/${claim.runId}/phases/${claim.phaseRunId}/claim`)).statusCode, 200)
        await page.goto('/inbox?claimed=me&kind=decision')
        assert.equal(await page.getByRole('checkbox', { name: 'Claimed by me' }).isChecked(), true)
        assert.equal(await page.getByRole('combobox', { name: 'Kind' }).inputValue(), 'decision')
        await rows.first().waitFor(WAIT)
        assert.equal(await rows.count(), 1)
        await rows.first().getByText('@local').waitFor(WAIT)
        await look('inbox filtered', 'console-inbox-filtered')
        // Enter opens the current item's run at its permalink, expanded and current.
        await page.keyboard.press('Enter')
        await page.waitForURL(`**/streams/${refunds.id}/runs/${claim.runId}`)
        const run = page.getByRole('list', { name: 'Runs' }).locator('[aria-current="true"]')
        await run.getByRole('button', { expanded: true }).waitFor(WAIT)
      })

      await step(t, current, `${dialect} runs: newest first, one line each, a permalink past the first page, Load more, Status, Retry`, async () => {
        const busy = (await send(app, 'POST', '/api/streams', { name: 'Busy' })).json()
        const cycle = (await send(app, 'POST', `/api/cycles/streams/${busy.id}/cycles`, { triggerName: 'nightly', description: 'Nightly clean-up', phasesTemplate: [gate('01890a5d-ac96-774b-bcce-b30209900003', 'Confirm')] })).json()
        const ids: string[] = []
        for (let i = 0; i < 27; i++) {
          const run = (await send(app, 'POST', `/api/cycles/streams/${busy.id}/cycles/${cycle.id}/runs`, {})).json()
          assert.equal((await send(app, 'POST', `/api/runs/${run.id}/cancel`)).statusCode, 200)
          ids.push(run.id)
        }
        const oldest = ids[0]!
        await page.goto(`/streams/${busy.id}/runs/${oldest}`)
        const list = page.getByRole('list', { name: 'Runs' })
        const rows = list.locator(':scope > li')
        const linked = list.locator('[aria-current="true"]')
        await linked.getByRole('button', { name: 'Nightly clean-up', expanded: true }).waitFor(WAIT)
        assert.ok(await linked.isVisible())
        const box = await linked.boundingBox()
        assert.ok(box && box.y >= 0 && box.y < 900, 'the permalink brings its run into view')
        assert.equal(await list.getByRole('button', { expanded: true }).count(), 1, 'the permalink expands its run only')
        assert.equal(await rows.count(), 27, 'reached past the first 25')
        // From the stream itself: 25 rows, newest first, each one line, then Load more.
        await page.goto(`/streams/${busy.id}`)
        await page.getByRole('tab', { name: 'Runs' }).click()
        await rows.nth(24).waitFor(WAIT)
        assert.equal(await rows.count(), 25)
        const heights = await rows.evaluateAll((els) => els.map((el) => el.getBoundingClientRect().height))
        assert.ok(heights.every((h) => h <= 64), `one line each: ${heights.join(', ')}`)
        const firstLink = rows.first().getByRole('link')
        assert.equal(await firstLink.getAttribute('href'), `/streams/${busy.id}/runs/${ids[26]}`, 'newest first, its start time a link to its permalink')
        await page.getByRole('button', { name: 'Load more runs' }).click()
        await rows.nth(26).waitFor(WAIT)
        await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'Waiting for me' })
        await page.getByText('No run matches this status.').waitFor(WAIT)
        await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'Canceled' })
        await rows.nth(24).waitFor(WAIT)
        await look('runs, one line each', 'console-runs-rows')
        // Retry: the newest canceled run, through the button; the new run is shown expanded.
        await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'All' })
        await rows.first().getByRole('button', { name: 'Retry run' }).click()
        await rows.first().getByRole('button', { expanded: true }).waitFor(WAIT)
        const retried = (await send(app, 'GET', `/api/runs/${ids[26]}`)).json()
        assert.ok(retried.retriedBy)
        const again = (await send(app, 'GET', `/api/runs/${retried.retriedBy}`)).json()
        assert.equal(again.retryOf, ids[26])
        await rows.first().getByText('retries run').waitFor(WAIT)
        await look('a retried run, expanded', 'console-runs-retry')
      })

      await step(t, current, `${dialect} chat: a failed answer where it would have been, with Retry run`, async () => {
        const refusing = createServer((request, response) => {
          request.resume()
          request.on('end', () => response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"no"}'))
        })
        await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve))
        t.after(() => refusing.close())
        const agent = (await send(app, 'POST', '/api/agents', { name: 'Triage (Claude)', endpointUrl: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/hook` })).json()
        const broken = (await send(app, 'POST', '/api/streams', { name: 'Broken' })).json()
        const cycle = (await send(app, 'POST', `/api/cycles/streams/${broken.id}/cycles`, { triggerName: 'sort', description: 'Sort a ticket', phasesTemplate: [{ id: '01890a5d-ac96-774b-bcce-b30209900004', agentId: agent.id, phaseName: 'Sort', goal: 'Sorted', instructions: '', autoAdvance: true, operatorPool: [] }] })).json()
        const run = (await send(app, 'POST', `/api/cycles/streams/${broken.id}/cycles/${cycle.id}/runs`, {})).json()
        await waitFor(async () => (await send(app, 'GET', `/api/runs/${run.id}`)).json().status === 'failed', { timeoutMs: 5000, what: 'the run to fail' })
        await page.goto(`/streams/${broken.id}`)
        const failed = page.locator('.failed-answer')
        await failed.getByText('could not answer', { exact: true }).waitFor(WAIT)
        await failed.getByText(/Triage \(Claude\) could not answer: the agent answered 400/).waitFor(WAIT)
        assert.equal(await failed.locator('.avatar').textContent(), 'TC', 'initials are letters')
        assert.equal(await page.getByText('No messages yet.').count(), 0, 'never "No messages yet." over a failure')
        await look('chat with a failed answer', 'console-chat-failed')
        await failed.getByRole('button', { name: 'Retry run' }).click()
        // The retry fails too (the same agent): its own failure follows; the first one offers no retry any more.
        await failed.nth(1).waitFor(WAIT)
        await failed.first().getByRole('button', { name: 'Retry run' }).waitFor({ state: 'detached', ...WAIT })
        const after = (await send(app, 'GET', `/api/runs/${run.id}`)).json()
        assert.ok(after.retriedBy, 'retried through the API')
      })

      await step(t, current, `${dialect} cycles: a save's warnings stay until dismissed; automation naming no cycle`, async () => {
        await page.getByRole('tab', { name: 'Cycles' }).click()
        const draft = page.getByRole('region', { name: 'Draft' })
        await draft.getByRole('button', { name: 'Add phase' }).click()
        const phase = draft.getByRole('listitem', { name: /^Phase 1:/ })
        await phase.getByRole('switch').check()
        await phase.getByRole('textbox', { name: 'Add operator' }).fill('@nobody')
        await phase.getByRole('textbox', { name: 'Add operator' }).press('Enter')
        await page.getByRole('button', { name: 'Save cycle' }).click()
        const warnings = page.getByRole('status').filter({ hasText: 'No one in this workspace has the handle @nobody' })
        await warnings.waitFor(WAIT)
        await look('cycles with a save warning', 'console-cycles-warnings')
        await warnings.getByRole('button', { name: 'Dismiss' }).click()
        await warnings.waitFor({ state: 'detached', ...WAIT })

        await page.getByRole('tab', { name: 'Automation' }).click()
        const schedules = page.getByRole('region', { name: 'Schedules' })
        await schedules.getByRole('combobox', { name: 'Trigger name' }).fill('nobody-has-this')
        await schedules.getByRole('combobox', { name: 'Repeats' }).selectOption({ label: 'Weekdays at 09:00' })
        await schedules.getByText('At 09:00, Monday through Friday').first().waitFor(WAIT)
        await schedules.getByRole('button', { name: 'Add schedule' }).click()
        await schedules.getByRole('status').filter({ hasText: 'No saved cycle of this stream has the trigger name "nobody-has-this"' }).waitFor(WAIT)
        const entry = schedules.getByRole('list', { name: 'Schedules' }).getByRole('listitem').first()
        await entry.getByText('No matching cycle').waitFor(WAIT)
        await entry.getByText('At 09:00, Monday through Friday').waitFor(WAIT)
        await look('automation with cron in words', 'console-automation-tab')
      })

      await step(t, current, `${dialect} MCP servers: add, test the connection, remove (confirmed)`, async () => {
        const fake = await startFakeMcpServer()
        t.after(() => fake.close())
        await send(app, 'POST', '/api/mcp-servers', { name: 'offline', url: await downMcpUrl() })
        await page.getByRole('link', { name: 'MCP servers' }).click()
        await page.getByRole('heading', { name: 'MCP servers' }).waitFor(WAIT)
        await page.getByRole('textbox', { name: 'Server name' }).fill('files')
        await page.getByRole('textbox', { name: 'Server URL' }).fill(fake.url)
        assert.ok(await page.getByRole('combobox', { name: 'Credential' }).isVisible())
        await page.getByRole('textbox', { name: 'Tools that need approval' }).fill('delete_*')
        await page.getByRole('button', { name: 'Add server' }).click()
        const servers = page.getByRole('list', { name: 'MCP servers' })
        const files = servers.getByRole('listitem').filter({ hasText: 'files' }).first()
        await files.getByText('Calls of delete_* wait for an operator\'s approval; other tools run without one.').waitFor(WAIT)
        const [stored] = (await send(app, 'GET', '/api/mcp-servers')).json().data.filter((s: any) => s.name === 'files')
        assert.deepEqual(stored.approval, { 'delete_*': 'always' })
        await files.getByRole('button', { name: 'Test connection' }).click()
        const tools = page.getByRole('list', { name: 'Tools of files' })
        await tools.getByRole('listitem').filter({ hasText: 'delete_file' }).getByText('needs approval').waitFor(WAIT)
        await tools.getByRole('listitem').filter({ hasText: 'echo' }).first().getByText('runs without approval').waitFor(WAIT)
        const offline = servers.getByRole('listitem').filter({ hasText: 'offline' }).first()
        await offline.getByRole('button', { name: 'Test connection' }).click()
        await offline.getByRole('alert').waitFor(WAIT)
        await look('MCP servers', 'console-mcp-servers')
        await offline.getByRole('button', { name: 'Remove server' }).click()
        await offline.getByRole('dialog').getByRole('button', { name: 'Remove' }).click()
        await offline.waitFor({ state: 'detached', ...WAIT })
        assert.deepEqual((await send(app, 'GET', '/api/mcp-servers')).json().data.map((s: any) => s.name), ['files'])
      })

      await step(t, current, `${dialect} agents: providers, auth modes and config in words`, async () => {
        await page.getByRole('link', { name: 'Agents' }).click()
        const provider = page.getByRole('combobox', { name: 'Provider' })
        await provider.selectOption({ label: 'Claude (Anthropic)' })
        assert.ok((await page.getByRole('combobox', { name: 'Auth mode' }).locator('option').allTextContents()).includes('API key'))
        await page.getByRole('textbox', { name: 'Model' }).fill('claude-sonnet-4-5')
        await page.getByText('Advanced').click()
        assert.match(await page.getByRole('textbox', { name: 'Config (JSON object)' }).inputValue(), /"model": "claude-sonnet-4-5"/)
        await look('agents with a provider in words', 'console-agents-provider')
      })

      await t.test(`${dialect} no request left this origin and nothing broke the CSP`, () => {
        assert.deepEqual(problems, [])
      })
    })
  }
})

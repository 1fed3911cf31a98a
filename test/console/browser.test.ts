// The console in real Chromium (playwright-core driving /usr/bin/chromium) against a real Tandem on each
// database: streams, chat (rich text, edits, a lost edit race, live messages, agents by name, mentions,
// relative times, decisions inline, a streaming answer), cycles (the phase editor), runs (the stepper, usage and cost), agents (field errors,
// namesakes, avatars, the credential picker), credentials, the command palette, shortcuts and themes, the key
// prompt; axe-core on every page in both themes; no request to another origin and no CSP violation anywhere.
// One browser for the whole file. Every page is photographed in both themes into test-results/console/ on
// every run (and failures too).
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { browserDialects, build, send } from '../helpers.js'
import { waitFor } from '../wait.js'
import { ensureWorkspace } from '../../src/workspaces/store.js'
import { downMcpUrl, startFakeMcpServer } from '../fakes/mcp-server.js'
import { startAnthropicToolFake } from '../fakes/vendors/tool-models.js'
import { createKey } from '../auth.js'

const CHROMIUM = process.env.TANDEM_TEST_CHROMIUM ?? '/usr/bin/chromium'
const ARTEFACTS = 'test-results/console'
const AXE_SOURCE = readFileSync('node_modules/axe-core/axe.min.js', 'utf8')
const WAIT = { timeout: 5000 }
// The first draft of a process starts the drafting worker pool (its lexicon loads in the worker): slow on a busy machine.
const DRAFT_WAIT = { timeout: 30000 }

const content = (...paragraphs: string[]) => ({ blocks: [{ type: 'rich_text', elements: paragraphs.map((text) => ({ type: 'paragraph', children: [{ type: 'text', text }] })) }] })

async function launch(): Promise<Browser> {
  // Fail, never skip: CI must have Chromium (apt-get install -y chromium).
  assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}: the console's browser tests cannot run`)
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
}

async function serve(dialect: Parameters<typeof build>[0], env: Record<string, string> = {}): Promise<{ app: FastifyInstance; url: string }> {
  // A database of its own on PostgreSQL, so that runs have job workers (see build in test/helpers.ts).
  const app = await build(dialect, env, { ownDatabase: true })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, url }
}

/** A page that records every request to another origin, every CSP violation and every uncaught error. */
async function openPage(browser: Browser, base: string) {
  // Reduced motion: no colour transitions mid-check when the theme changes.
  const context = await browser.newContext({ baseURL: base, viewport: { width: 1200, height: 850 }, reducedMotion: 'reduce', colorScheme: 'light' })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('request', (request) => {
    // blob: URLs of this origin are the avatars, fetched with the key and shown from memory.
    if (!request.url().startsWith(base) && !request.url().startsWith('data:') && !request.url().startsWith(`blob:${base}`)) problems.push(`request to another origin: ${request.url()}`)
  })
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) problems.push(`CSP: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  const eventStreams: string[] = []
  page.on('response', (response) => {
    if (response.headers()['content-type']?.startsWith('text/event-stream')) eventStreams.push(response.url())
  })
  return { page, problems, eventStreams, close: () => context.close() }
}

/** axe-core, injected through the debugging protocol (the CSP rightly refuses inline scripts). */
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

/** axe in the light and in the dark theme; with `shot`, a full-page screenshot of each into test-results/console/. */
async function checkPage(page: Page, where: string, shot?: string | false) {
  const original = await page.evaluate(() => (globalThis as any).document.documentElement.dataset.theme ?? null)
  for (const theme of ['light', 'dark']) {
    await page.evaluate((t) => { (globalThis as any).document.documentElement.dataset.theme = t }, theme)
    await assertAccessible(page, `${where} (${theme} theme)`)
    if (shot) {
      mkdirSync(ARTEFACTS, { recursive: true })
      await page.screenshot({ path: `${ARTEFACTS}/${shot}-${theme}.png`, fullPage: true })
    }
  }
  await page.evaluate((t) => {
    const root = (globalThis as any).document.documentElement
    if (t === null) delete root.dataset.theme
    else root.dataset.theme = t
  }, original)
}

/** The page's background colour as [r, g, b]. */
async function background(page: Page): Promise<number[]> {
  const colour: string = await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.documentElement).backgroundColor)
  return colour.match(/\d+/g)!.slice(0, 3).map(Number)
}
const isDark = (rgb: number[]) => rgb.reduce((a, b) => a + b, 0) / 3 < 80

// A 1×1 PNG, the picture an agent's avatar asset serves in these tests.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

/** A local agent speaking the custom_webhook protocol: answers each task at once, quoting its attempt and feedback. */
async function webhookAgent(): Promise<{ url: string; tasks: any[]; server: Server }> {
  const tasks: any[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      const task = JSON.parse(body)
      tasks.push(task)
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ output: { text: `Reply draft, attempt ${task.task.attempt}${task.phase.feedback ? ` (feedback: ${task.phase.feedback})` : ''}` } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, tasks, server }
}

/** A sub-test that leaves a screenshot behind when it fails. */
function step(t: TestContext, page: () => Page, name: string, fn: () => Promise<void>) {
  return t.test(name, async () => {
    try {
      await fn()
    } catch (error) {
      mkdirSync(ARTEFACTS, { recursive: true })
      await page().screenshot({ path: `${ARTEFACTS}/${name.replace(/\W+/g, '-')}.png`, fullPage: true }).catch(() => {})
      throw error
    }
  })
}

test('the console in Chromium', async (t) => {
  const browser = await launch()
  t.after(() => browser.close())

  for (const dialect of browserDialects()) {
    await t.test(dialect, async (t) => {
      // The agents of the runs test listen on 127.0.0.1.
      const { app, url } = await serve(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' })
      t.after(() => app.close())
      const { page, problems, eventStreams, close } = await openPage(browser, url)
      t.after(close)
      const current = () => page
      // Screenshots from the first database's run (both would show the same pages).
      // Every page's picture in both themes, on one database, when asked for (they cost the browser a full-page
      // render each): TANDEM_TEST_SCREENSHOTS=1, or TANDEM_UPDATE_SCREENSHOT=1 to refresh the docs' pictures too.
      const shots = dialect === browserDialects()[0] && (process.env.TANDEM_TEST_SCREENSHOTS === '1' || process.env.TANDEM_UPDATE_SCREENSHOT === '1')
      let streamId = ''

      await step(t, current, `${dialect} streams: create one with the keyboard alone`, async () => {
        await page.goto('/')
        await page.getByRole('heading', { name: 'Streams' }).waitFor()
        await page.getByText('No streams yet.').waitFor(WAIT)
        await checkPage(page, 'streams (empty)', shots && 'streams-empty')
        const name = page.getByRole('textbox', { name: 'Stream name' })
        for (let i = 0; i < 30 && !(await name.evaluate((el) => el === (globalThis as any).document.activeElement)); i++) await page.keyboard.press('Tab')
        assert.ok(await name.evaluate((el) => el === (globalThis as any).document.activeElement), 'Stream name reachable with Tab')
        await page.keyboard.type('Operations')
        await page.keyboard.press('Enter')
        await page.getByRole('link', { name: 'Operations' }).waitFor(WAIT)
        await page.getByRole('textbox', { name: 'Stream name' }).fill('Second stream')
        await page.getByRole('button', { name: 'Create stream' }).click()
        await page.getByRole('link', { name: 'Second stream' }).waitFor(WAIT)
        const links = await page.locator('.stream-list').getByRole('link').allTextContents()
        assert.deepEqual(links, ['Operations', 'Second stream'], 'oldest first')
        const listed = (await send(app, 'GET', '/api/streams')).json().data
        streamId = listed[0].id
        await checkPage(page, 'streams', shots && 'streams')
      })

      await step(t, current, `${dialect} chat: send rich text, edit, see earlier versions`, async () => {
        await page.getByRole('link', { name: 'Operations' }).click()
        await page.waitForURL(`**/streams/${streamId}`)
        await page.getByRole('tab', { name: 'Chat' }).waitFor()
        await page.getByText('No messages yet.').waitFor(WAIT)
        await checkPage(page, 'stream chat (empty)', shots && 'chat-empty')
        const message = page.getByRole('textbox', { name: 'Message' })
        await message.click()
        await page.keyboard.type('Hello ')
        await page.keyboard.press('Control+b')
        await page.keyboard.type('world')
        await page.keyboard.press('Control+b')
        await page.keyboard.press('Enter')
        await page.getByRole('button', { name: 'Right-to-left' }).click()
        await page.keyboard.type('שלום')
        await page.getByRole('button', { name: 'Send' }).click()
        await page.locator('.messages strong', { hasText: 'world' }).waitFor(WAIT)
        const sent = (await send(app, 'GET', `/api/chat/streams/${streamId}/messages`)).json().data
        assert.equal(sent.length, 1)
        assert.deepEqual(sent[0].content, { blocks: [{ type: 'rich_text', elements: [
          { type: 'paragraph', children: [{ type: 'text', text: 'Hello ' }, { type: 'text', text: 'world', style: { bold: true } }] },
          { type: 'paragraph', direction: 'rtl', children: [{ type: 'text', text: 'שלום' }] },
        ] }] })
        assert.equal(await page.locator('.messages p[dir="rtl"]').textContent(), 'שלום')
        assert.equal(await message.textContent(), '', 'the composer is emptied after sending')

        // Ctrl+Enter sends too.
        await message.click()
        await page.keyboard.type('Second message')
        await page.keyboard.press('Control+Enter')
        await page.getByText('Second message').waitFor(WAIT)

        await page.getByRole('button', { name: 'Edit' }).first().click()
        const edit = page.getByRole('textbox', { name: 'Edit message' })
        await edit.click()
        await page.keyboard.press('Control+a')
        await page.keyboard.type('Hello edited')
        await page.getByRole('button', { name: 'Save' }).click()
        await edit.waitFor({ state: 'detached', ...WAIT })
        await page.locator('.messages').getByText('Hello edited').waitFor(WAIT)
        const edited = (await send(app, 'GET', `/api/chat/messages/${sent[0].id}`)).json()
        assert.equal(edited.revision, 2)
        assert.equal(edited.text, 'Hello edited')
        await page.getByRole('button', { name: 'Earlier versions' }).click()
        await page.getByRole('list', { name: 'Earlier versions' }).getByText('Hello world').waitFor(WAIT)
        await checkPage(page, 'chat with messages and history')
      })

      await step(t, current, `${dialect} chat: an edit that lost a race shows the newer version and keeps the text`, async () => {
        const [first] = (await send(app, 'GET', `/api/chat/streams/${streamId}/messages`)).json().data
        await page.getByRole('button', { name: 'Edit' }).first().click()
        const edit = page.getByRole('textbox', { name: 'Edit message' })
        await edit.click()
        await page.keyboard.press('Control+a')
        await page.keyboard.type('My version')
        // Someone else edits first.
        const theirs = await send(app, 'PATCH', `/api/chat/messages/${first.id}`, { content: content('Their version') })
        assert.equal(theirs.statusCode, 200)
        await page.getByRole('button', { name: 'Save' }).click()
        const alert = page.getByRole('alert').filter({ hasText: 'changed while you were editing' })
        await alert.waitFor(WAIT)
        await alert.getByText('Their version').waitFor(WAIT)
        assert.equal(await edit.textContent(), 'My version', 'the person\'s text is kept')
        assert.equal((await send(app, 'GET', `/api/chat/messages/${first.id}`)).json().text, 'Their version', 'nothing overwritten silently')
        await checkPage(page, 'chat edit conflict', shots && 'chat-edit-conflict')
        // Saving again is a deliberate overwrite of the version now shown.
        await page.getByRole('button', { name: 'Save' }).click()
        await edit.waitFor({ state: 'detached', ...WAIT })
        await page.locator('.messages').getByText('My version').waitFor(WAIT)
        const after = (await send(app, 'GET', `/api/chat/messages/${first.id}`)).json()
        assert.equal(after.revision, 4)
        const revisions = (await send(app, 'GET', `/api/chat/messages/${first.id}/revisions`)).json().data.map((r: any) => r.text)
        assert.deepEqual(revisions, ['Hello world\nשלום', 'Hello edited', 'Their version'])
      })

      await step(t, current, `${dialect} chat: a message posted through the API appears live`, async () => {
        // The page follows the stream's events (Server-Sent Events), not a poll.
        assert.ok(eventStreams.some((u) => u.includes(`/api/streams/${streamId}/events`)), 'the stream page opened its event stream')
        const posted = await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: content('Posted through the API') })
        assert.equal(posted.statusCode, 201)
        await page.locator('.messages').getByText('Posted through the API').waitFor(WAIT)
      })

      await step(t, current, `${dialect} chat: mentions highlighted (mine more), times relative with the exact time on hover`, async () => {
        const posted = await send(app, 'POST', `/api/chat/streams/${streamId}/messages`, { content: content('@local and @maria, please look (not mail@example.org)') })
        assert.equal(posted.statusCode, 201)
        const item = page.locator('.message').filter({ hasText: 'please look' })
        await item.locator('mark.mention.me').filter({ hasText: '@local' }).waitFor(WAIT)
        assert.deepEqual(await item.locator('mark.mention').allTextContents(), ['@local', '@maria'], 'an address is not a mention')
        const time = item.locator('time')
        assert.match((await time.textContent()) ?? '', /just now|seconds? ago/)
        const title = (await time.getAttribute('title')) ?? ''
        assert.match(title, /\d{4}/, 'the exact time on hover')
        assert.equal(await time.getAttribute('datetime'), posted.json().createdAt)
        await checkPage(page, 'chat with mentions', shots && 'chat')
      })

      await step(t, current, `${dialect} cycles: draft, refine, then edit the phases beside the prompt and save`, async () => {
        const triager = (await send(app, 'POST', '/api/agents', { name: 'Triage bot', endpointUrl: 'https://agents.example/triage' })).json()
        await page.getByRole('tab', { name: 'Chat' }).focus()
        await page.keyboard.press('ArrowRight')
        await page.getByRole('tab', { name: 'Cycles', selected: true }).waitFor(WAIT)
        await page.getByRole('textbox', { name: 'Prompt' }).waitFor()
        await page.getByText('No saved cycles yet.').waitFor(WAIT)
        await checkPage(page, 'cycles (empty)', shots && 'cycles-empty')
        await page.getByRole('textbox', { name: 'Prompt' }).fill('When a ticket arrives, triage the ticket, then have @maria approve it.')
        await page.getByRole('button', { name: 'Draft', exact: true }).click()
        const draft = page.getByRole('region', { name: 'Draft' })
        const triage = draft.getByRole('listitem', { name: /Triage ticket/ })
        await triage.getByRole('button', { name: 'Remove @maria' }).waitFor(DRAFT_WAIT)
        assert.equal(await triage.getByRole('switch').isChecked(), true, 'the gate of an approved phase is on')
        await page.getByRole('textbox', { name: 'Prompt' }).fill('Rename Triage ticket to Intake.')
        await page.getByRole('button', { name: 'Refine' }).click()
        await page.getByText('renamed "Triage ticket" to "Intake"').waitFor(DRAFT_WAIT)
        const intake = draft.getByRole('listitem', { name: /Intake/ })
        await intake.waitFor(WAIT)
        assert.equal(await intake.getByRole('textbox', { name: 'Phase name' }).inputValue(), 'Intake')

        // The editor: the agent picker, operators as chips, the gate switch, add, reorder, remove.
        await intake.getByRole('combobox', { name: 'Agent' }).selectOption({ label: 'Triage bot' })
        await intake.getByRole('button', { name: 'Remove @maria' }).click()
        await intake.getByRole('textbox', { name: 'Add operator' }).fill('@sam')
        await intake.getByRole('textbox', { name: 'Add operator' }).press('Enter')
        await intake.getByRole('button', { name: 'Remove @sam' }).waitFor(WAIT)
        await draft.getByRole('button', { name: 'Add phase' }).click()
        const second = draft.getByRole('listitem', { name: /^Phase 2:/ })
        await second.getByRole('textbox', { name: 'Phase name' }).fill('Reply')
        await second.getByRole('textbox', { name: 'Goal' }).fill('A reply is sent')
        assert.equal(await second.getByRole('switch').isChecked(), false, 'a new phase advances on its own')
        await second.getByRole('switch').check()
        await draft.getByRole('button', { name: 'Add phase' }).click()
        await draft.getByRole('listitem', { name: /^Phase 3:/ }).getByRole('textbox', { name: 'Phase name' }).fill('Throwaway')
        await draft.getByRole('button', { name: 'Move Reply up' }).click()
        assert.deepEqual(await draft.getByRole('textbox', { name: 'Phase name' }).evaluateAll((els) => els.map((el: any) => el.value)), ['Reply', 'Intake', 'Throwaway'])
        assert.equal(await draft.getByRole('combobox', { name: 'Agent' }).count(), 3, 'a combobox "Agent" per phase')
        await draft.getByRole('listitem', { name: /Throwaway/ }).getByRole('button', { name: 'Remove phase' }).click()
        assert.equal(await draft.getByRole('button', { name: 'Remove phase' }).count(), 2)
        await intake.locator('.agent-pick .avatar').getByText('TB', { exact: true }).waitFor(WAIT)
        await checkPage(page, 'cycles with the phase editor', shots && 'cycles-editor')
        await page.getByRole('button', { name: 'Save cycle' }).click()
        await page.getByRole('button', { name: 'Start run' }).waitFor(WAIT)
        const saved = (await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles`)).json().data
        assert.equal(saved.length, 1)
        assert.deepEqual(saved[0].phasesTemplate.map((p: any) => [p.phaseName, p.agentId, p.operatorPool, p.autoAdvance]), [
          ['Reply', '00000000-0000-0000-0000-000000000000', [], false],
          ['Intake', triager.id, ['sam'], false],
        ])
        assert.equal(saved[0].phasesTemplate[0].goal, 'A reply is sent')
        // Saved phases are numbered once ("1 Reply"), never "1. 1. Reply".
        const listed = page.locator('.phase-summary').first()
        assert.equal((await listed.locator('li').first().textContent())?.match(/\d/g)?.length ?? 0, 1)
        await listed.getByText('Triage bot').waitFor(WAIT)
        await checkPage(page, 'cycles saved', shots && 'cycles')
        assert.equal((await send(app, 'DELETE', `/api/agents/${triager.id}`)).statusCode, 204)
      })

      await step(t, current, `${dialect} cycles: schedules, message triggers and inbound hooks of the stream`, async () => {
        const [cycle] = (await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles`)).json().data
        const trigger = cycle.triggerName as string
        await page.getByRole('tab', { name: 'Automation' }).click()
        const schedules = page.getByRole('region', { name: 'Schedules' })
        await schedules.getByText('No schedules.').waitFor(WAIT)
        // Cron in words: a preset fills the expression, and typed words update as one types.
        await schedules.getByRole('combobox', { name: 'Repeats' }).selectOption({ label: 'Every minute' })
        assert.equal(await schedules.getByRole('textbox', { name: 'Cron' }).inputValue(), '* * * * *')
        await schedules.locator('p', { hasText: /^Every minute$/ }).waitFor(WAIT)
        await schedules.getByRole('textbox', { name: 'Cron' }).fill('0 9 * * 1-5')
        await schedules.getByText('At 09:00, Monday through Friday').waitFor(WAIT)
        // A bad cron and time zone: each error beside its field, nothing stored.
        await schedules.getByRole('combobox', { name: 'Trigger name' }).fill(trigger)
        await schedules.getByRole('textbox', { name: 'Cron' }).fill('61 * * * *')
        await schedules.getByRole('textbox', { name: 'Time zone' }).fill('Mars/Olympus')
        await schedules.getByRole('button', { name: 'Add schedule' }).click()
        const cron = schedules.getByRole('textbox', { name: 'Cron' })
        await cron.and(page.locator('[aria-invalid="true"]')).waitFor(WAIT)
        assert.equal(await schedules.getByRole('textbox', { name: 'Time zone' }).getAttribute('aria-invalid'), 'true')
        assert.deepEqual((await send(app, 'GET', `/api/streams/${streamId}/schedules`)).json().data, [])
        await cron.fill('0 9 * * 1')
        await schedules.getByRole('textbox', { name: 'Time zone' }).fill('Europe/Paris')
        await schedules.getByRole('button', { name: 'Add schedule' }).click()
        const entry = schedules.getByRole('list', { name: 'Schedules' }).getByRole('listitem').filter({ hasText: '0 9 * * 1' })
        await entry.getByText(/^next (in |tomorrow|next )/).waitFor(WAIT)
        await entry.getByText('At 09:00, only on Monday').waitFor(WAIT)
        assert.equal(await entry.locator('code').textContent(), '0 9 * * 1', 'the expression beside its words')
        const [schedule] = (await send(app, 'GET', `/api/streams/${streamId}/schedules`)).json().data
        assert.deepEqual([schedule.triggerName, schedule.cron, schedule.timezone, schedule.enabled], [trigger, '0 9 * * 1', 'Europe/Paris', true])
        assert.equal(await entry.locator('time').getAttribute('datetime'), schedule.nextRunAt)
        await entry.getByRole('switch', { name: `Enabled: ${trigger} at 0 9 * * 1` }).click()
        await entry.getByText('paused').waitFor(WAIT)
        assert.equal((await send(app, 'GET', `/api/schedules/${schedule.id}`)).json().enabled, false)
        await entry.getByRole('switch').click()
        await entry.locator('time').waitFor(WAIT)
        assert.equal((await send(app, 'GET', `/api/schedules/${schedule.id}`)).json().enabled, true)

        // Message triggers: at least one thing to match, then listed.
        const triggers = page.getByRole('region', { name: 'Message triggers' })
        await triggers.getByRole('combobox', { name: 'Trigger name' }).fill(trigger)
        await triggers.getByRole('button', { name: 'Add message trigger' }).click()
        await triggers.getByRole('alert').filter({ hasText: 'Say what to match' }).waitFor(WAIT)
        await triggers.getByRole('textbox', { name: 'Prefix' }).fill('/triage')
        await triggers.getByRole('combobox', { name: 'Author' }).selectOption({ label: 'a person' })
        await triggers.getByRole('button', { name: 'Add message trigger' }).click()
        await triggers.getByText('when a new message starts with “/triage”, written by a person').waitFor(WAIT)
        const [messageTrigger] = (await send(app, 'GET', `/api/streams/${streamId}/message-triggers`)).json().data
        assert.deepEqual(messageTrigger.match, { mention: null, prefix: '/triage', authorType: 'principal' })

        // Inbound hooks: the secret shown once, with a copy button; never again.
        await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url })
        const hooks = page.getByRole('region', { name: 'Inbound hooks' })
        await hooks.getByRole('combobox', { name: 'Trigger name' }).fill(trigger)
        await hooks.getByRole('button', { name: 'Add hook' }).click()
        const once = hooks.getByRole('status').filter({ hasText: 'shown this once' })
        await once.waitFor(WAIT)
        const secret = (await once.locator('code').nth(1).textContent()) ?? ''
        assert.match(secret, /^whsec_/)
        await checkPage(page, 'cycles with schedules, triggers and hooks', shots && 'cycles-automation')
        await once.getByRole('button', { name: 'Copy secret' }).click()
        await once.getByRole('button', { name: 'Copied' }).waitFor(WAIT)
        assert.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), secret)
        await once.getByRole('button', { name: 'Done' }).click()
        await once.waitFor({ state: 'detached', ...WAIT })
        const [hook] = (await send(app, 'GET', `/api/streams/${streamId}/hooks`)).json().data
        await hooks.getByText(hook.url).waitFor(WAIT)
        assert.ok(!(await page.content()).includes(secret), 'the secret is gone from the page')
        assert.ok(!JSON.stringify(hook).includes(secret))

        // Deleting each.
        await entry.getByRole('button', { name: `Delete schedule ${trigger} at 0 9 * * 1` }).click()
        await schedules.getByText('No schedules.').waitFor(WAIT)
        await triggers.getByRole('button', { name: /^Delete message trigger/ }).click()
        await triggers.getByText('No message triggers.').waitFor(WAIT)
        await hooks.getByRole('button', { name: /^Delete hook/ }).click()
        await hooks.getByText('No inbound hooks.').waitFor(WAIT)
        assert.deepEqual((await send(app, 'GET', `/api/streams/${streamId}/hooks`)).json().data, [])
        assert.deepEqual((await send(app, 'GET', `/api/streams/${streamId}/message-triggers`)).json().data, [])
      })

      await step(t, current, `${dialect} agents: a field error beside its field, then create`, async () => {
        await page.getByRole('link', { name: 'Agents' }).click()
        await page.getByRole('heading', { name: 'Agents' }).waitFor()
        await page.getByText('No agents yet.').waitFor(WAIT)
        await checkPage(page, 'agents (empty)', shots && 'agents-empty')
        await page.getByRole('textbox', { name: 'Name' }).fill('Researcher')
        await page.getByRole('textbox', { name: 'Instructions' }).fill('Find sources.')
        const endpoint = page.getByRole('textbox', { name: 'Endpoint URL' })
        await endpoint.fill('not a url')
        await page.getByRole('combobox', { name: 'Provider' }).selectOption('custom_webhook')
        await page.getByRole('button', { name: 'Create agent' }).click()
        await page.getByRole('alert').filter({ hasText: 'not saved' }).waitFor(WAIT)
        const describedBy = await endpoint.getAttribute('aria-describedby')
        assert.ok(describedBy, 'the Endpoint URL field is tied to its error')
        const error = await page.locator(`[id="${describedBy}"]`).textContent()
        assert.match(error ?? '', /url|uri|http/i)
        assert.equal(await endpoint.getAttribute('aria-invalid'), 'true')
        assert.equal(await page.getByRole('textbox', { name: 'Name' }).getAttribute('aria-describedby'), null, 'only the named field is marked')
        assert.deepEqual((await send(app, 'GET', '/api/agents')).json().data, [], 'a refused create changes nothing')
        await checkPage(page, 'agents with a field error', shots && 'agents-field-error')
        await endpoint.fill('https://agents.example/hook')
        await page.getByRole('button', { name: 'Create agent' }).click()
        await page.getByRole('listitem').filter({ hasText: 'Researcher' }).waitFor(WAIT)
        const agents = (await send(app, 'GET', '/api/agents')).json().data
        assert.equal(agents.length, 1)
        assert.equal(agents[0].endpointUrl, 'https://agents.example/hook')
        assert.equal(agents[0].instructions, 'Find sources.')
        assert.equal(await endpoint.getAttribute('aria-describedby'), null, 'the error is gone')
      })

      await step(t, current, `${dialect} agents: edit and delete`, async () => {
        await page.getByRole('button', { name: 'Edit Researcher' }).click()
        await page.getByRole('textbox', { name: 'Name' }).fill('Researcher 2')
        await page.getByRole('button', { name: 'Save agent' }).click()
        await page.getByRole('button', { name: 'Delete Researcher 2' }).click()
        await page.getByRole('button', { name: 'Confirm deleting Researcher 2' }).click()
        await page.getByText('No agents yet.').waitFor(WAIT)
        assert.deepEqual((await send(app, 'GET', '/api/agents')).json().data, [])
      })

      await step(t, current, `${dialect} agents: from a template, an avatar uploaded (a refused file explained), a failing auth mode named before saving`, async () => {
        await page.getByRole('heading', { name: 'Agents' }).waitFor()
        const template = page.getByRole('combobox', { name: 'Template' })
        await template.locator('option', { hasText: 'Triage (Claude)' }).waitFor({ state: 'attached', ...WAIT })
        await template.selectOption({ label: 'Triage (Claude)' })
        assert.equal(await page.getByRole('combobox', { name: 'Provider' }).inputValue(), 'claude', 'the template fills the form')
        assert.equal(await page.getByRole('textbox', { name: 'Name' }).inputValue(), 'Triage (Claude)')
        assert.match(await page.getByRole('textbox', { name: 'Instructions' }).inputValue(), /triage/i)
        await page.getByRole('textbox', { name: 'Name' }).fill('Ticket triage')
        // claude with no auth mode and no credential sends nothing (none): it works; api_key without a credential and direct_line do not.
        const warning = page.getByRole('status').filter({ hasText: 'agent-misconfigured' })
        assert.equal(await warning.count(), 0)
        const authMode = page.getByRole('combobox', { name: 'Auth mode' })
        await authMode.selectOption('api_key')
        await warning.filter({ hasText: 'needs a credential' }).waitFor(WAIT)
        await authMode.selectOption('direct_line')
        await warning.filter({ hasText: 'claude cannot work with auth mode direct_line' }).waitFor(WAIT)
        await checkPage(page, 'agents from a template with a warning', shots && 'agents-template')
        await authMode.selectOption('')
        await warning.waitFor({ state: 'detached', ...WAIT })

        // The avatar: a file that is not the image it claims is refused with the server's detail (415), beside the field.
        const avatar = page.getByLabel('Avatar')
        await avatar.setInputFiles({ name: 'avatar.png', mimeType: 'image/png', buffer: Buffer.from('not a picture') })
        await page.getByText('The picture was not uploaded').waitFor(WAIT)
        const describedBy = await avatar.getAttribute('aria-describedby')
        assert.match((await page.locator(`[id="${describedBy}"]`).textContent()) ?? '', /not uploaded: .+/)
        assert.equal(await avatar.getAttribute('aria-invalid'), 'true')
        // Too large (413) and too many pixels (422): each says why, in the server's words.
        await avatar.setInputFiles({ name: 'big.png', mimeType: 'image/png', buffer: Buffer.concat([PNG, Buffer.alloc(1024 * 1024)]) })
        await page.getByText(/not uploaded: The image must be at most \d+ bytes/).waitFor(WAIT)
        const huge = Buffer.from(PNG)
        huge.writeUInt32BE(5000, 16)
        huge.writeUInt32BE(5000, 20)
        await avatar.setInputFiles({ name: 'huge.png', mimeType: 'image/png', buffer: huge })
        await page.getByText(/not uploaded: .*4096/).waitFor(WAIT)
        await avatar.setInputFiles({ name: 'avatar.png', mimeType: 'image/png', buffer: PNG })
        await page.getByRole('form', { name: 'New agent' }).getByRole('img', { name: 'Ticket triage' }).waitFor(WAIT)
        assert.equal(await page.getByText('The picture was not uploaded').count(), 0)
        await page.getByRole('button', { name: 'Create agent' }).click()
        const listed = page.getByRole('listitem').filter({ hasText: 'Ticket triage' })
        await listed.getByRole('img', { name: 'Ticket triage' }).waitFor(WAIT)
        assert.equal(await page.getByLabel('Avatar').inputValue(), '', 'the emptied form forgets the file too')
        const [created] = (await send(app, 'GET', '/api/agents')).json().data
        assert.equal(created.templateId, 'builtin:claude-triage')
        assert.equal(created.providerType, 'claude')
        assert.equal(created.config.model, 'claude-sonnet-4-5')
        assert.equal(created.authMode, null)
        const asset = await send(app, 'GET', `/api/assets/${created.avatarAssetId}`)
        assert.equal(asset.statusCode, 200)
        assert.equal(asset.json().bytes, PNG.length)
        await checkPage(page, 'agents with an uploaded avatar', shots && 'agents-avatar')
        assert.equal((await send(app, 'DELETE', `/api/agents/${created.id}`)).statusCode, 204)
        await page.reload()
        await page.getByText('No agents yet.').waitFor(WAIT)
      })

      await step(t, current, `${dialect} agents: the tools picker lists Tandem's tools and each MCP server's live list`, async () => {
        // A real MCP server (the official SDK on 127.0.0.1) whose delete_* tools need an approval, and one that is down.
        const fake = await startFakeMcpServer()
        t.after(() => fake.close())
        const files = (await send(app, 'POST', '/api/mcp-servers', { name: 'files', url: fake.url, approval: { 'delete_*': 'always' } })).json()
        const down = (await send(app, 'POST', '/api/mcp-servers', { name: 'offline', url: await downMcpUrl() })).json()
        await page.goto('/agents')
        await page.getByRole('heading', { name: 'Agents' }).waitFor()
        const picker = page.getByRole('group', { name: 'Tools', exact: true })
        const tandem = picker.getByRole('group', { name: 'Tandem' })
        for (const name of ['tandem.read_messages', 'tandem.post_message', 'tandem.ask_operator']) await tandem.getByRole('checkbox', { name }).waitFor(WAIT)
        const server = picker.getByRole('group', { name: 'MCP server files' })
        await server.getByRole('checkbox', { name: 'files.echo' }).waitFor(WAIT)
        // The server's own descriptions, and the approval its globs give each tool.
        assert.equal(await server.getByRole('checkbox', { name: 'files.echo' }).getAttribute('aria-describedby') !== null, true)
        await server.getByText('Says the text back.').waitFor(WAIT)
        await server.getByRole('listitem').filter({ hasText: 'files.delete_file' }).getByText('needs approval').waitFor(WAIT)
        assert.equal(await server.getByRole('listitem').filter({ hasText: 'files.echo' }).getByText('needs approval').count(), 0)
        // A server that cannot be reached says so (502 mcp-unreachable) in its own group; the others still work.
        await picker.getByRole('group', { name: 'MCP server offline' }).getByRole('alert').filter({ hasText: 'could not be listed' }).waitFor(WAIT)

        await page.getByRole('textbox', { name: 'Name' }).fill('Librarian')
        await page.getByRole('textbox', { name: 'Endpoint URL' }).fill('https://agents.example/librarian')
        await tandem.getByRole('checkbox', { name: 'tandem.read_messages' }).check()
        await server.getByRole('checkbox', { name: 'files.echo' }).check()
        await server.getByRole('checkbox', { name: 'files.delete_file' }).check()
        // Another entry (the spec accepts any string): kept as a chip, removable.
        await picker.getByRole('textbox', { name: 'Other tool' }).fill('github.search')
        await picker.getByRole('textbox', { name: 'Other tool' }).press('Enter')
        await picker.getByRole('list', { name: 'Other tool entries' }).getByText('github.search').waitFor(WAIT)
        await picker.getByRole('textbox', { name: 'Other tool' }).fill('typo')
        await picker.getByRole('button', { name: 'Add tool' }).click()
        await picker.getByRole('button', { name: 'Remove typo' }).click()
        await picker.getByText('4 of at most 50 chosen.').waitFor(WAIT)
        await checkPage(page, 'agents with the tools picker', shots && 'agents-tools')
        await page.getByRole('button', { name: 'Create agent' }).click()
        await page.getByRole('listitem').filter({ hasText: 'Librarian' }).waitFor(WAIT)
        let [agent] = (await send(app, 'GET', '/api/agents')).json().data.filter((a: any) => a.name === 'Librarian')
        assert.deepEqual(agent.capabilities.tools, ['tandem.read_messages', 'files.echo', 'files.delete_file', 'github.search'])

        // Editing: the saved entries are checked; "every tool" of a server covers (and replaces) its single tools.
        await page.getByRole('button', { name: 'Edit Librarian' }).click()
        const form = page.getByRole('form', { name: 'Edit Librarian' })
        const edited = form.getByRole('group', { name: 'MCP server files' })
        assert.equal(await edited.getByRole('checkbox', { name: 'files.echo' }).isChecked(), true)
        await edited.getByRole('checkbox', { name: 'files.*' }).check()
        assert.equal(await edited.getByRole('checkbox', { name: 'files.big' }).isDisabled(), true)
        assert.equal(await edited.getByRole('checkbox', { name: 'files.big' }).isChecked(), true)
        await edited.getByRole('checkbox', { name: 'files.*' }).waitFor(WAIT)
        await form.getByRole('button', { name: 'Save agent' }).click()
        await form.waitFor({ state: 'detached', ...WAIT })
        ;[agent] = (await send(app, 'GET', '/api/agents')).json().data.filter((a: any) => a.name === 'Librarian')
        assert.deepEqual(agent.capabilities.tools, ['tandem.read_messages', 'github.search', 'files.*'])

        assert.equal((await send(app, 'DELETE', `/api/agents/${agent.id}`)).statusCode, 204)
        for (const s of [files, down]) assert.equal((await send(app, 'DELETE', `/api/mcp-servers/${s.id}`)).statusCode, 204)
      })

      await step(t, current, `${dialect} cycles: a decision policy edited beside the phases, its deadlines counted down in the run`, async () => {
        const stream = (await send(app, 'POST', '/api/streams', { name: 'Policies' })).json()
        await page.goto(`/streams/${stream.id}`)
        await page.getByRole('tab', { name: 'Cycles' }).click()
        const draft = page.getByRole('region', { name: 'Draft' })
        await draft.getByRole('button', { name: 'Add phase' }).click()
        const phase = draft.getByRole('listitem', { name: /^Phase 1:/ })
        await phase.getByRole('textbox', { name: 'Phase name' }).fill('Sign off')
        await phase.getByRole('switch').check()
        const policy = draft.getByRole('group', { name: 'Decision policy' })
        await policy.getByRole('textbox', { name: 'Remind after' }).fill('1h')
        await policy.getByRole('textbox', { name: 'Remind after' }).press('Tab')
        assert.equal(await policy.getByRole('textbox', { name: 'Remind after' }).inputValue(), '1 hour', 'a short duration is read back with its unit spelled out')
        assert.equal(await policy.getByRole('textbox', { name: 'Remind after' }).getAttribute('title'), 'PT1H', 'the ISO form in its title')
        await phase.getByText('Policy of Sign off').click()
        await phase.getByRole('textbox', { name: 'Expire after' }).fill('PT30M')
        await phase.getByRole('textbox', { name: 'Expire after' }).press('Tab')
        await phase.getByRole('combobox', { name: 'On expiry' }).selectOption('approve')
        await checkPage(page, 'cycles with a decision policy', shots && 'cycles-policy')
        await page.getByRole('button', { name: 'Save cycle' }).click()
        await page.getByText('Policy: remind after 1 hour; 1 phase has its own.').waitFor(WAIT)
        const [saved] = (await send(app, 'GET', `/api/cycles/streams/${stream.id}/cycles`)).json().data
        assert.deepEqual(saved.policy, { decision: { remindAfter: 'PT1H' }, phases: { [saved.phasesTemplate[0].id]: { expireAfter: 'PT30M', onExpire: 'approve' } } })
        await page.getByRole('button', { name: 'Start run' }).click()
        const waiting = page.locator('.phase.awaiting_decision')
        await waiting.locator('.deadlines').getByText(/reminder in (1 hour|60 minutes)/).waitFor(WAIT)
        await waiting.locator('.deadlines').getByText(/expires in 30 minutes/).waitFor(WAIT)
        assert.match((await waiting.locator('.deadlines time').first().getAttribute('title')) ?? '', /\d{4}/)
        await checkPage(page, 'runs with deadlines', shots && 'runs-deadlines')
        await page.getByRole('button', { name: 'Cancel run' }).click()
        await page.locator('.run-line .status.canceled').waitFor(WAIT)
      })

      await step(t, current, `${dialect} tool calls: an approval in the inbox and the stepper, a question answered in the chat`, async () => {
        // A Claude agent (a local fake of the Messages API) whose model calls an MCP tool that needs an approval, then asks.
        const model = await startAnthropicToolFake()
        const fake = await startFakeMcpServer()
        t.after(async () => { await model.close(); await fake.close() })
        const server = (await send(app, 'POST', '/api/mcp-servers', { name: 'files', url: fake.url, approval: { 'delete_*': 'always' } })).json()
        const stream = (await send(app, 'POST', '/api/streams', { name: 'Tools at work' })).json()
        const agent = (await send(app, 'POST', '/api/agents', { name: 'Janitor', providerType: 'claude', authMode: 'none', endpointUrl: model.base, config: { model: 'claude-test' }, capabilities: { streaming: false, tools: ['files.*', 'tandem.ask_operator'] } })).json()
        const cycle = (await send(app, 'POST', `/api/cycles/streams/${stream.id}/cycles`, {
          triggerName: 'cleanup', description: 'Clean up',
          phasesTemplate: [{ id: '01890a5d-ac96-774b-bcce-b302099a8301', agentId: agent.id, phaseName: 'Clean', goal: 'Old files are gone', instructions: '', autoAdvance: true, operatorPool: ['local'] }],
        })).json()
        model.turns.set(
          { calls: [{ name: 'files__delete_file', input: { path: '/tmp/old.log' } }] },
          { calls: [{ name: 'tandem__ask_operator', input: { question: 'Delete /tmp/older.log too?' } }] },
          { text: 'Deleted /tmp/old.log; kept the other.' },
        )
        const run = (await send(app, 'POST', `/api/cycles/streams/${stream.id}/cycles/${cycle.id}/runs`, {})).json()
        await page.goto('/inbox')
        await page.getByRole('list', { name: 'Waiting for me' }).getByRole('listitem').filter({ hasText: 'Tool approval' }).filter({ hasText: 'Tools at work' }).waitFor({ timeout: 15000 })
        const item = page.getByRole('region', { name: 'Details' })
        await item.getByRole('button', { name: 'Deny' }).waitFor({ timeout: 15000 })
        await item.getByRole('button', { name: 'Claim' }).waitFor(WAIT)
        await checkPage(page, 'inbox with a tool approval', shots && 'inbox-tool-approval')
        await page.goto(`/streams/${stream.id}`)
        await page.getByRole('tab', { name: 'Runs' }).click()
        const call = page.getByRole('list', { name: 'Tool calls of Clean' }).getByRole('listitem', { name: 'Tool call files.delete_file' })
        await call.getByText('awaiting approval').waitFor(WAIT)
        await page.locator('.phase.awaiting_tool_approval .badge.status').getByText('Awaiting tool approval').waitFor(WAIT)
        // The run's header says what it waits for.
        await page.locator('.run-line .status.waiting').getByText('Waiting for a tool approval', { exact: true }).waitFor(WAIT)
        await checkPage(page, 'runs with a tool call awaiting approval', shots && 'runs-tool-approval')
        await call.getByRole('button', { name: 'Approve' }).click()
        await call.getByText('@local approved').waitFor({ timeout: 15000 })
        // The question, in the chat's flow: answered there.
        await page.getByRole('tab', { name: 'Chat' }).click()
        const asks = page.locator('.tool-entry').filter({ hasText: 'Delete /tmp/older.log too?' })
        await asks.getByRole('textbox', { name: 'Answer' }).waitFor({ timeout: 15000 })
        await checkPage(page, 'chat with tool calls and a question', shots && 'chat-tools')
        await page.getByRole('tab', { name: 'Runs' }).click()
        await page.locator('.run-line .status.waiting').getByText('Waiting for an answer', { exact: true }).waitFor(WAIT)
        await page.getByRole('tab', { name: 'Chat' }).click()
        await asks.getByRole('textbox', { name: 'Answer' }).fill('No, keep it.')
        await asks.getByRole('button', { name: 'Send answer' }).click()
        await page.locator('.messages').getByText('Deleted /tmp/old.log; kept the other.').waitFor({ timeout: 15000 })
        const calls = (await send(app, 'GET', `/api/runs/${run.id}/tool-calls`)).json().data
        assert.equal(fake.calls.filter((c) => c.name === 'delete_file').length, 1, 'the call is made once, after the approval')
        assert.deepEqual(calls.map((c: any) => [c.name, c.status]), [['files.delete_file', 'succeeded'], ['tandem.ask_operator', 'succeeded']])
        assert.equal(calls[1].output, 'No, keep it.')
        assert.equal((await send(app, 'DELETE', `/api/agents/${agent.id}`)).statusCode, 204)
        assert.equal((await send(app, 'DELETE', `/api/mcp-servers/${server.id}`)).statusCode, 204)
      })

      await step(t, current, `${dialect} runs: start, request changes, approve, reject, cancel`, async () => {
        const agent = await webhookAgent()
        t.after(() => agent.server.close())
        const stream = (await send(app, 'POST', '/api/streams', { name: 'Support' })).json()
        const writer = (await send(app, 'POST', '/api/agents', { name: 'Writer', endpointUrl: agent.url })).json()
        // The key-less local caller is the admin with the handle `local`: a member of both pools.
        const phase = (id: string, agentId: string, phaseName: string, operatorPool: string[]) => ({ id, agentId, phaseName, goal: `${phaseName} done`, instructions: '', autoAdvance: false, operatorPool })
        const cycle = await send(app, 'POST', `/api/cycles/streams/${stream.id}/cycles`, {
          triggerName: 'ticket', description: 'Answer a ticket',
          phasesTemplate: [
            phase('01890a5d-ac96-774b-bcce-b302099a8001', writer.id, 'Write reply', ['local', 'maria']),
            phase('01890a5d-ac96-774b-bcce-b302099a8002', '00000000-0000-0000-0000-000000000000', 'Final check', ['@Local']),
          ],
        })
        assert.equal(cycle.statusCode, 201, cycle.body)
        await page.goto(`/streams/${stream.id}`)
        await page.getByRole('tab', { name: 'Cycles' }).click()
        await page.getByRole('button', { name: 'Start run' }).click()
        // Starting a run switches to the Runs tab; the agent's answer arrives and the phase waits for a decision.
        const waiting = page.locator('.phase.awaiting_decision')
        await waiting.getByText('Reply draft, attempt 1').waitFor(WAIT)
        // The stepper: the agent by name (never "Agent 78b9243b"), a status badge, numbered once.
        await waiting.locator('.agent-name').getByText('Writer').waitFor(WAIT)
        assert.equal(await waiting.locator('.badge.status').textContent(), 'Awaiting decision')
        assert.equal(await page.locator('.run-line .status.waiting').textContent(), 'Waiting for a decision')
        assert.equal(await waiting.getByRole('heading', { level: 4 }).textContent(), 'Phase 1: Write reply')
        await checkPage(page, 'runs awaiting a decision', shots && 'runs-awaiting-decision')
        await waiting.getByRole('textbox', { name: 'Note' }).fill('Shorter, please')
        await waiting.getByRole('button', { name: 'Request changes' }).click()
        await page.locator('.phase.awaiting_decision').getByText('Reply draft, attempt 2 (feedback: Shorter, please)').waitFor(WAIT)
        assert.equal(agent.tasks.length, 2)
        // Attempts and the decision history.
        await waiting.getByText('attempt 2', { exact: true }).waitFor(WAIT)
        await waiting.getByRole('list', { name: 'Decisions on Write reply' }).getByText('@local asked for changes: “Shorter, please”').waitFor(WAIT)

        // In the chat, the agent's answers carry its name and, on the waiting output, the decision buttons.
        await page.getByRole('tab', { name: 'Chat' }).click()
        const answer = page.locator('.message.agent').filter({ hasText: 'Reply draft, attempt 2' })
        await answer.locator('.meta').getByText('Writer', { exact: true }).waitFor(WAIT)
        await answer.getByText('agent', { exact: true }).waitFor(WAIT)
        assert.doesNotMatch((await page.locator('.messages').textContent()) ?? '', /Agent [0-9a-f]{8}/, 'no agent shown by id')
        assert.equal(await page.locator('.message.agent').filter({ hasText: 'Reply draft, attempt 1' }).getByRole('button', { name: 'Approve' }).count(), 0, 'a superseded output has no buttons')
        await answer.getByRole('button', { name: 'Request changes' }).waitFor(WAIT)
        await answer.getByRole('button', { name: 'Reject' }).waitFor(WAIT)
        await checkPage(page, 'chat with a decision inline', shots && 'chat-decision-inline')
        await answer.getByRole('button', { name: 'Approve' }).click()
        await answer.getByRole('list', { name: 'Decisions on Write reply' }).getByText('@local approved').waitFor(WAIT)
        // Where each decision came from: these were made in the console (it marks its requests).
        await answer.getByRole('list', { name: 'Decisions on Write reply' }).getByText('via console').first().waitFor(WAIT)
        assert.equal(await answer.getByRole('button', { name: 'Approve' }).count(), 0)

        await page.getByRole('tab', { name: 'Runs' }).click()
        await page.locator('.phase.awaiting_decision').filter({ hasText: 'Final check' }).waitFor(WAIT)
        await page.locator('.phase.succeeded').filter({ hasText: 'Write reply' }).getByText(/^took /).waitFor(WAIT)
        await page.getByRole('button', { name: 'Reject' }).click()
        await page.locator('.run-line .status.rejected').waitFor(WAIT)
        assert.equal(await page.getByRole('button', { name: 'Cancel run' }).count(), 0, 'a finished run cannot be canceled')
        const [run] = (await send(app, 'GET', `/api/cycles/streams/${stream.id}/runs`)).json().data
        assert.equal(run.status, 'rejected')
        assert.deepEqual(run.phases.map((p: any) => [p.status, p.decisions.map((d: any) => `${d.decision} by ${d.handle}`)]), [['succeeded', ['revise by local', 'approve by local']], ['failed', ['reject by local']]])

        // A second run, canceled while it waits.
        await page.getByRole('tab', { name: 'Cycles' }).click()
        await page.getByRole('button', { name: 'Start run' }).click()
        await page.locator('.phase.awaiting_decision').getByText('Reply draft, attempt 1').waitFor(WAIT)
        await page.getByRole('button', { name: 'Cancel run' }).click()
        await page.locator('.run-line .status.canceled').waitFor(WAIT)
        const runs = (await send(app, 'GET', `/api/cycles/streams/${stream.id}/runs`)).json().data
        assert.deepEqual(runs.map((r: any) => r.status), ['rejected', 'canceled'])
        await checkPage(page, 'finished runs', shots && 'runs')
        assert.equal((await send(app, 'DELETE', `/api/agents/${writer.id}`)).statusCode, 204)
      })

      await step(t, current, `${dialect} streaming: the answer grows under "Writing…", whole after message.completed; tokens and cost on the run and phase`, async () => {
        // A webhook agent answering with text/event-stream; the test lets each part go, so every state is seen.
        const gates = [0, 1].map(() => {
          let resolve = () => {}
          const promise = new Promise<void>((r) => (resolve = r))
          return { promise, resolve }
        })
        const server = createServer((request, response) => {
          request.resume()
          request.on('end', async () => {
            response.writeHead(200, { 'content-type': 'text/event-stream' })
            response.write(`data: ${JSON.stringify({ delta: 'Refund approved: ' })}\n\n`)
            await gates[0]!.promise
            response.write(`data: ${JSON.stringify({ delta: 'order 42' })}\n\n`)
            await gates[1]!.promise
            response.end(`data: ${JSON.stringify({ output: { text: 'Refund approved: order 42, paid back today.' }, usage: { inputTokens: 1200, outputTokens: 300 } })}\n\n`)
          })
        })
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
        t.after(() => { for (const gate of gates) gate.resolve(); server.closeAllConnections(); server.close() })
        const stream = (await send(app, 'POST', '/api/streams', { name: 'Refunds' })).json()
        const refunder = await send(app, 'POST', '/api/agents', {
          name: 'Refunder', providerType: 'custom_webhook', endpointUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
          capabilities: { streaming: true, tools: [] }, config: { pricing: { inputPerMTok: 3, outputPerMTok: 15 } },
        })
        assert.equal(refunder.statusCode, 201, refunder.body)
        const cycle = await send(app, 'POST', `/api/cycles/streams/${stream.id}/cycles`, {
          triggerName: 'refund', description: 'Answer a refund request',
          phasesTemplate: [{ id: '01890a5d-ac96-774b-bcce-b302099a8101', agentId: refunder.json().id, phaseName: 'Answer', goal: 'Answered', instructions: '', autoAdvance: true, operatorPool: [] }],
        })
        assert.equal(cycle.statusCode, 201, cycle.body)
        await page.goto(`/streams/${stream.id}`)
        await page.getByText('No messages yet.').waitFor(WAIT)
        const run = (await send(app, 'POST', `/api/cycles/streams/${stream.id}/cycles/${cycle.json().id}/runs`, {})).json()

        // The first delta: the message appears, busy, with its badge and no Edit.
        const item = page.locator('.message.agent').filter({ hasText: 'Refund approved:' })
        await item.waitFor(WAIT)
        assert.equal(await item.getAttribute('aria-busy'), 'true')
        await item.getByText('Writing…').waitFor(WAIT)
        await item.locator('.meta').getByText('Refunder', { exact: true }).waitFor(WAIT)
        const [avatar, body] = [await item.locator('.avatar').first().boundingBox(), await item.locator('.body').boundingBox()]
        assert.ok(avatar && body && body.x >= avatar.x + avatar.width && Math.abs(body.y - avatar.y) < 20, 'the text beside the avatar, as in any message (no busy spinner taking its column)')
        assert.equal(await item.getByRole('button', { name: 'Edit' }).count(), 0, 'a streaming message offers no Edit')
        const [streaming] = (await send(app, 'GET', `/api/chat/streams/${stream.id}/messages`)).json().data
        assert.equal(streaming.status, 'streaming')
        const edit = await send(app, 'PATCH', `/api/chat/messages/${streaming.id}`, { content: content('Overwritten') })
        assert.equal(edit.statusCode, 409)
        assert.equal(edit.json().type, 'urn:tandem:problem:message-streaming')
        await checkPage(page, 'chat with an answer being written', shots && 'chat-streaming')

        // The second delta: the same message grows, still busy.
        gates[0]!.resolve()
        await item.getByText('Refund approved: order 42', { exact: true }).waitFor(WAIT)
        assert.equal(await item.getAttribute('aria-busy'), 'true')
        await item.getByText('Writing…').waitFor(WAIT)
        assert.equal(await page.locator('.message.agent').count(), 1, 'one message, not one per delta')

        // message.completed: the whole text, no badge, no longer busy.
        gates[1]!.resolve()
        await item.getByText('Refund approved: order 42, paid back today.', { exact: true }).waitFor(WAIT)
        await item.and(page.locator(':not([aria-busy])')).waitFor(WAIT)
        assert.equal(await item.getByText('Writing…').count(), 0)
        assert.equal(await page.locator('.message.agent').count(), 1)
        const done = (await send(app, 'GET', `/api/chat/messages/${streaming.id}`)).json()
        assert.deepEqual([done.status, done.text], ['complete', 'Refund approved: order 42, paid back today.'])
        await checkPage(page, 'chat with a written answer')

        // Usage and cost: 1,200 × $3/MTok + 300 × $15/MTok = $0.0081, on the run and on its phase.
        await page.getByRole('tab', { name: 'Runs' }).click()
        await page.locator('.run-line .status.succeeded').waitFor(WAIT)
        // A finished run is one line until opened.
        const line = page.getByRole('list', { name: 'Runs' }).getByRole('listitem').first()
        assert.ok(((await line.boundingBox())?.height ?? 100) <= 64, 'a collapsed run is one line (at most 64 px)')
        await line.getByRole('button', { expanded: false }).click()
        const finished = (await send(app, 'GET', `/api/runs/${run.id}`)).json()
        assert.deepEqual([finished.usage, finished.costUsd], [{ inputTokens: 1200, outputTokens: 300 }, 0.0081])
        const shown = '1.2K in · 300 out tokens · $0.0081'
        await page.locator('.run-details > .step-meta .usage').getByText(shown, { exact: true }).waitFor(WAIT)
        const phaseUsage = page.locator('.phase').filter({ hasText: 'Answer' }).locator('.usage')
        await phaseUsage.getByText(shown, { exact: true }).waitFor(WAIT)
        assert.equal(await phaseUsage.getAttribute('title'), '1,200 input tokens, 300 output tokens')
        await checkPage(page, 'runs with usage and cost', shots && 'runs-usage')
        assert.equal((await send(app, 'DELETE', `/api/agents/${refunder.json().id}`)).statusCode, 204)
      })

      await step(t, current, `${dialect} inbox: the count in the header follows the live feed; claim and decide in place`, async () => {
        // The live feed follows the streams that exist when it connects (a new one joins at its next keep-alive).
        const stream = (await send(app, 'POST', '/api/streams', { name: 'Approvals' })).json()
        await page.goto('/')
        await page.getByRole('heading', { name: 'Streams' }).waitFor()
        await page.getByRole('link', { name: 'Inbox (0)' }).waitFor(WAIT)
        assert.ok(eventStreams.some((u) => u.endsWith('/api/me/inbox/events')), 'the header follows GET /api/me/inbox/events')
        // A real run of a people's phase, waiting for a decision of @local (the key-less caller).
        const cycle = (await send(app, 'POST', `/api/cycles/streams/${stream.id}/cycles`, {
          triggerName: 'sign-off', description: 'Sign off',
          phasesTemplate: [{ id: '01890a5d-ac96-774b-bcce-b302099a8201', agentId: '00000000-0000-0000-0000-000000000000', phaseName: 'Sign off', goal: 'Sign off the refund of 40 EUR', instructions: '', autoAdvance: false, operatorPool: ['local'] }],
        })).json()
        const started = await send(app, 'POST', `/api/cycles/streams/${stream.id}/cycles/${cycle.id}/runs`, {})
        assert.ok(started.statusCode < 300, started.body)
        const run = started.json()
        // No reload and no poll within the wait: the live feed brings the item (the header re-reads only every 60 s while live).
        const link = page.getByRole('link', { name: 'Inbox (1)' })
        await link.waitFor(WAIT)
        await link.click()
        const item = page.getByRole('region', { name: 'Details' })
        await page.getByRole('list', { name: 'Waiting for me' }).getByRole('listitem').filter({ hasText: 'Approvals' }).waitFor(WAIT)
        await item.getByText('Sign off the refund of 40 EUR').waitFor(WAIT)
        await item.getByRole('button', { name: 'Claim' }).click()
        await item.getByText('claimed by @local').waitFor(WAIT)
        await item.getByRole('button', { name: 'Release' }).waitFor(WAIT)
        await checkPage(page, 'inbox', shots && 'inbox')
        await item.getByRole('textbox', { name: 'Note' }).fill('Refund sent')
        await item.getByRole('button', { name: 'Approve' }).click()
        await page.getByText('Nothing waits for you.').waitFor(WAIT)
        await page.getByRole('link', { name: 'Inbox (0)' }).waitFor(WAIT)
        const after = (await send(app, 'GET', `/api/runs/${run.id}`)).json()
        assert.equal(after.status, 'succeeded')
        assert.deepEqual(after.phases[0].decisions.map((d: any) => `${d.decision} by ${d.handle}: ${d.note}`), ['approve by local: Refund sent'])
        await checkPage(page, 'inbox (empty)', shots && 'inbox-empty')

        // A second run appears live while the inbox page is open, and goes when it is decided elsewhere.
        const second = (await send(app, 'POST', `/api/cycles/streams/${stream.id}/cycles/${cycle.id}/runs`, {})).json()
        await page.getByRole('link', { name: 'Inbox (1)' }).waitFor(WAIT)
        await item.waitFor(WAIT)
        const phase = await waitFor(async () => {
          const first = (await send(app, 'GET', `/api/runs/${second.id}`)).json().phases[0]
          return first.status === 'awaiting_decision' ? first : undefined
        }, { timeoutMs: 5000, what: 'the second run to wait for a decision' })
        assert.equal((await send(app, 'POST', `/api/runs/${second.id}/phases/${phase.id}/decision`, { decision: 'reject' })).statusCode, 200)
        await page.getByRole('link', { name: 'Inbox (0)' }).waitFor(WAIT)
        await page.getByText('Nothing waits for you.').waitFor(WAIT)
      })

      await step(t, current, `${dialect} inbox: absent where this Tandem has none (404)`, async () => {
        const isInbox = (u: URL) => u.pathname.startsWith('/api/me/inbox')
        await page.route(isInbox, (route) => route.fulfill({ status: 404, json: { type: 'about:blank', title: 'Not Found', status: 404 } }))
        await page.goto('/inbox')
        await page.getByText('This Tandem has no inbox yet.').waitFor(WAIT)
        assert.equal(await page.getByRole('link', { name: /^Inbox/ }).count(), 0)
        await page.unroute(isInbox)
      })

      await step(t, current, `${dialect} agents: namesakes told apart, avatars (a picture, initials when it fails), the credential picker`, async () => {
        const one = (await send(app, 'POST', '/api/agents', { name: 'Helper', endpointUrl: 'https://agents.example/one', avatarAssetId: '01890a5d-ac96-774b-bcce-b302099a8101' })).json()
        const two = (await send(app, 'POST', '/api/agents', { name: 'Helper', endpointUrl: 'https://agents.example/two', avatarAssetId: '01890a5d-ac96-774b-bcce-b302099a8102' })).json()
        const key = (await send(app, 'POST', '/api/credentials', { name: 'Webhook key', secret: 'whk-0123456789-abcd' })).json()
        // The first agent's picture loads; the second's asset does not exist (404), so it shows initials.
        await page.route(`**/api/assets/${one.avatarAssetId}/content`, (route) => route.fulfill({ status: 200, contentType: 'image/png', body: PNG }))
        await page.getByRole('link', { name: 'Agents' }).click()
        await page.getByRole('heading', { name: 'Agents' }).waitFor()
        const first = page.locator(`[id="agent-${one.id}"]`)
        const second = page.locator(`[id="agent-${two.id}"]`)
        await first.getByRole('img', { name: 'Helper' }).waitFor(WAIT)
        await second.locator('.avatar').getByText('HE', { exact: true }).waitFor(WAIT)
        assert.equal(await second.getByRole('img').count(), 0)
        const hints = [await first.locator('.hint').textContent(), await second.locator('.hint').textContent()]
        assert.notEqual(hints[0], hints[1], 'two agents of one name are told apart')
        assert.ok(hints[0]?.includes(one.id.slice(-8)) && hints[1]?.includes(two.id.slice(-8)), hints.join(' / '))

        // The credential picker: by name and hint, never a UUID to type.
        await page.getByRole('textbox', { name: 'Name' }).fill('Keyed')
        await page.getByRole('textbox', { name: 'Endpoint URL' }).fill('https://agents.example/keyed')
        const picker = page.getByRole('combobox', { name: 'Credential' })
        await picker.selectOption({ label: 'Webhook key (secret …abcd)' })
        await checkPage(page, 'agents with namesakes and avatars', shots && 'agents')
        await page.getByRole('button', { name: 'Create agent' }).click()
        await page.locator('.card').filter({ hasText: 'Keyed' }).getByText('credential: Webhook key').waitFor(WAIT)
        const keyed = (await send(app, 'GET', '/api/agents')).json().data.find((a: any) => a.name === 'Keyed')
        assert.equal(keyed.credentialId, key.id)
        // Editing shows the picture the avatar id names.
        await first.getByRole('button', { name: 'Edit Helper' }).click()
        await page.getByRole('form', { name: 'Edit Helper' }).getByRole('img', { name: 'Helper' }).waitFor(WAIT)
        await page.getByRole('button', { name: 'Cancel' }).click()
        for (const agent of [one, two, keyed]) assert.equal((await send(app, 'DELETE', `/api/agents/${agent.id}`)).statusCode, 204)
        assert.equal((await send(app, 'DELETE', `/api/credentials/${key.id}`)).statusCode, 204)
        await page.unroute(`**/api/assets/${one.avatarAssetId}/content`)
      })

      await step(t, current, `${dialect} themes: the system's preference, then the "Dark theme" toggle, remembered`, async () => {
        await page.goto('/')
        const toggle = page.getByRole('button', { name: 'Dark theme' })
        await toggle.waitFor(WAIT)
        assert.equal(await toggle.getAttribute('aria-pressed'), 'false')
        assert.ok(!isDark(await background(page)), 'light by default where the system is light')
        await toggle.click()
        await page.getByRole('button', { name: 'Dark theme', pressed: true }).waitFor(WAIT)
        assert.ok(isDark(await background(page)), 'dark after the toggle')
        await page.reload()
        await page.getByRole('button', { name: 'Dark theme', pressed: true }).waitFor(WAIT)
        assert.ok(isDark(await background(page)), 'the choice is remembered')
        await page.keyboard.press('Shift+D')
        await page.getByRole('button', { name: 'Dark theme', pressed: false }).waitFor(WAIT)
        assert.ok(!isDark(await background(page)))
        // A new visitor whose system prefers dark gets a dark page with no choice made.
        const context = await page.context().browser()!.newContext({ baseURL: url, colorScheme: 'dark' })
        try {
          const dark = await context.newPage()
          await dark.goto('/')
          await dark.getByRole('button', { name: 'Dark theme', pressed: true }).waitFor(WAIT)
          assert.ok(isDark(await background(dark)), 'prefers-color-scheme: dark alone gives a dark page')
        } finally {
          await context.close()
        }
      })

      await step(t, current, `${dialect} command palette (Ctrl+K, ⌘K) and keyboard shortcuts (?)`, async () => {
        await page.goto('/credentials')
        await page.getByRole('heading', { name: 'Credentials' }).waitFor()
        await page.keyboard.press('Control+k')
        const palette = page.getByRole('dialog', { name: 'Command palette' })
        const search = palette.getByRole('combobox', { name: 'Search' })
        await search.waitFor(WAIT)
        assert.ok(await search.evaluate((el) => el === (globalThis as any).document.activeElement), 'the search box has the focus')
        await search.fill('second')
        await palette.getByRole('option', { name: /Second stream/ }).waitFor(WAIT)
        await checkPage(page, 'command palette', shots && 'palette')
        await page.keyboard.press('Enter')
        await page.getByRole('heading', { name: 'Second stream' }).waitFor(WAIT)
        assert.equal(await palette.isVisible(), false)
        await page.keyboard.press('Meta+k')
        await search.waitFor(WAIT)
        await search.fill('agents')
        await page.keyboard.press('Enter')
        await page.getByRole('heading', { name: 'Agents' }).waitFor(WAIT)
        await page.keyboard.press('Control+k')
        await search.waitFor(WAIT)
        // A close whose event is still on its way when the palette opens again (Enter, then Ctrl+K at once, on
        // a busy machine) must not shut the reopened palette: the event arrives after the reopening here.
        assert.equal(await page.evaluate(async () => {
          const dialog = (globalThis as any).document.querySelector('dialog.palette')
          const delivered = new Promise((resolve) => dialog.addEventListener('close', resolve, { once: true }))
          dialog.close()
          dialog.showModal()
          await delivered
          await new Promise((resolve) => setTimeout(resolve, 0))
          return dialog.open
        }), true, 'a stale close event leaves the reopened palette open')
        await search.waitFor(WAIT)
        // Ctrl+K opens, never toggles: pressed again it leaves the palette open.
        await page.keyboard.press('Control+k')
        await search.waitFor(WAIT)
        await page.keyboard.press('Escape')
        await search.waitFor({ state: 'hidden', ...WAIT })

        await page.keyboard.press('?')
        const shortcuts = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
        await shortcuts.getByText('Open the command palette (⌘K on a Mac)').waitFor(WAIT)
        await checkPage(page, 'keyboard shortcuts', shots && 'shortcuts')
        await page.keyboard.press('Escape')
        await shortcuts.waitFor({ state: 'hidden', ...WAIT })
        await page.keyboard.press('g')
        await page.keyboard.press('c')
        await page.getByRole('heading', { name: 'Credentials' }).waitFor(WAIT)
        await page.keyboard.press('g')
        await page.keyboard.press('s')
        await page.getByRole('heading', { name: 'Streams' }).waitFor(WAIT)
      })

      await step(t, current, `${dialect} credentials: create, a field error, rename, replace the secret, delete; the secret never shown`, async () => {
        const SECRET = 'sk-console-test-0123456789-wxyz'
        await page.getByRole('link', { name: 'Credentials' }).click()
        await page.getByRole('heading', { name: 'Credentials' }).waitFor()
        await page.getByText('No credentials yet.').waitFor(WAIT)
        await checkPage(page, 'credentials (empty)', shots && 'credentials-empty')
        const name = page.getByRole('textbox', { name: 'Credential name' })
        await page.getByLabel('Secret', { exact: true }).fill(SECRET)
        await page.getByRole('button', { name: 'Create credential' }).click()
        // The empty name is refused by the server; its detail is tied to the field, and the secret is cleared.
        await name.and(page.locator('[aria-invalid="true"]')).waitFor(WAIT)
        const describedBy = await name.getAttribute('aria-describedby')
        assert.match((await page.locator(`[id="${describedBy}"]`).textContent()) ?? '', /character|fewer|least|empty/i)
        assert.equal(await page.getByLabel('Secret', { exact: true }).inputValue(), '')
        await checkPage(page, 'credentials with a field error')
        await name.fill('Anthropic')
        await page.getByLabel('Secret', { exact: true }).fill(SECRET)
        await page.getByRole('button', { name: 'Create credential' }).click()
        const item = page.getByRole('listitem').filter({ hasText: 'Anthropic' })
        await item.getByText('secret …wxyz').waitFor(WAIT)
        await page.getByRole('button', { name: 'Change Anthropic' }).click()
        const form = page.getByRole('form', { name: 'Change Anthropic' })
        await form.getByRole('textbox', { name: 'Credential name' }).fill('Anthropic prod')
        await form.getByLabel('New secret (leave empty to keep)').fill('another-secret-9876')
        await form.getByRole('button', { name: 'Save credential' }).click()
        await page.getByRole('listitem').filter({ hasText: 'Anthropic prod' }).getByText('secret …9876').waitFor(WAIT)
        await checkPage(page, 'credentials', shots && 'credentials')
        assert.ok(!(await page.content()).includes(SECRET), 'the secret is never shown back')
        const [stored] = (await send(app, 'GET', '/api/credentials')).json().data
        assert.equal(stored.name, 'Anthropic prod')
        await page.getByRole('button', { name: 'Delete Anthropic prod' }).click()
        await page.getByText('No credentials yet.').waitFor(WAIT)
        assert.deepEqual((await send(app, 'GET', '/api/credentials')).json().data, [])
      })

      await step(t, current, `${dialect} an unknown stream: a clear message, never a blank page`, async () => {
        await page.goto('/streams/01890a5d-ac96-774b-bcce-b302099a8057')
        await page.getByRole('alert').filter({ hasText: 'Not found' }).waitFor(WAIT)
        await checkPage(page, 'unknown stream', shots && 'stream-not-found')
      })

      // The docs' pictures (docs/console.md): copied from this run's screenshots with TANDEM_UPDATE_SCREENSHOT=1.
      if (shots && process.env.TANDEM_UPDATE_SCREENSHOT === '1') {
        const pictures = { 'console.png': 'chat-decision-inline-light', 'console-dark.png': 'runs-dark', 'console-cycles.png': 'cycles-editor-light', 'console-runs.png': 'runs-light', 'console-palette-dark.png': 'palette-dark', 'console-automation.png': 'cycles-automation-light', 'console-agent-template-dark.png': 'agents-template-dark', 'console-inbox-dark.png': 'inbox-dark', 'console-agent-tools.png': 'agents-tools-light', 'console-cycles-policy.png': 'cycles-policy-light', 'console-runs-deadlines-dark.png': 'runs-deadlines-dark', 'console-runs-tool-approval.png': 'runs-tool-approval-light', 'console-chat-tools-dark.png': 'chat-tools-dark', 'console-chat-streaming-dark.png': 'chat-streaming-dark', 'console-runs-usage.png': 'runs-usage-light' }
        for (const [target, source] of Object.entries(pictures)) if (existsSync(`${ARTEFACTS}/${source}.png`)) copyFileSync(`${ARTEFACTS}/${source}.png`, `docs/${target}`)
      }

      await t.test(`${dialect} no request left this origin and nothing broke the CSP`, () => {
        assert.deepEqual(problems, [])
      })
    })
  }

  await t.test('where keys are required: a key prompt, the signed-in caller, sign-out', async (t) => {
    const dialect = browserDialects()[0]!
    const { app, url } = await serve(dialect, { TANDEM_AUTH: 'required' })
    t.after(() => app.close())
    const workspaceId = await ensureWorkspace(app.database.db, 'default')
    const { key } = await createKey(app, { workspaceId, name: 'Maria', role: 'admin' })
    const { key: memberKey } = await createKey(app, { workspaceId, name: 'Sam', role: 'member' })
    const { page, problems, close } = await openPage(browser, url)
    t.after(close)
    await step(t, () => page, 'key prompt', async () => {
      await page.goto('/')
      const input = page.getByLabel('API key')
      await input.waitFor(WAIT)
      await checkPage(page, 'key prompt', 'key-prompt')
      await input.fill('tdm_wrong')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor(WAIT)
      await input.fill(key)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { name: 'Streams' }).waitFor(WAIT)
      await page.getByRole('banner').getByText('Signed in as @maria (admin)').waitFor(WAIT)
      assert.equal(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('tandem.apiKey')), key)
      await page.getByRole('textbox', { name: 'Stream name' }).fill('With a key')
      await page.getByRole('button', { name: 'Create stream' }).click()
      await page.getByRole('link', { name: 'With a key' }).waitFor(WAIT)
      await page.reload()
      await page.getByRole('link', { name: 'With a key' }).waitFor(WAIT)
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByLabel('API key').waitFor(WAIT)
      assert.equal(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('tandem.apiKey')), null)

      // A member: reads agents and credentials, may not write either; a refused write is a clear message.
      await page.getByLabel('API key').fill(memberKey)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('banner').getByText('Signed in as @sam (member)').waitFor(WAIT)
      await page.getByRole('link', { name: 'Credentials' }).click()
      await page.getByText('Only admins create or change credentials.').waitFor(WAIT)
      assert.equal(await page.getByRole('button', { name: 'Create credential' }).count(), 0)
      await page.getByRole('link', { name: 'Agents' }).click()
      await page.getByRole('textbox', { name: 'Name' }).fill('Not mine to make')
      await page.getByRole('button', { name: 'Create agent' }).click()
      await page.getByRole('alert').filter({ hasText: 'Not allowed' }).waitFor(WAIT)
      await checkPage(page, 'agents refused to a member')
      // The inbox feed is read with the key too (EventSource could not send it); hooks are for admins only.
      await page.getByRole('link', { name: 'Inbox (0)' }).waitFor(WAIT)
      await page.getByRole('link', { name: 'Streams' }).click()
      await page.getByRole('link', { name: 'With a key' }).click()
      await page.getByRole('tab', { name: 'Cycles' }).click()
      await page.getByRole('tab', { name: 'Automation' }).click()
      await page.getByRole('region', { name: 'Inbound hooks' }).getByText('Only admins see and create inbound hooks.').waitFor(WAIT)
      await page.getByRole('region', { name: 'Schedules' }).getByText('No schedules.').waitFor(WAIT)
      assert.deepEqual(problems, [])
    })
  })
})

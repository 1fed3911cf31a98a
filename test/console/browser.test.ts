// The console in real Chromium (playwright-core driving /usr/bin/chromium) against a real Tandem on each
// database: streams, chat (rich text, edits, a lost edit race, live messages), cycles, agents (field errors),
// the key prompt; axe-core on every page; no request to another origin and no CSP violation anywhere.
// One browser for the whole file. Screenshots of failures go to test-results/console/.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { build, dialects, send } from '../helpers.js'
import { createApiKey, ensureWorkspace } from '../../src/workspaces/store.js'

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
  const context = await browser.newContext({ baseURL: base, viewport: { width: 1200, height: 850 } })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('request', (request) => {
    if (!request.url().startsWith(base) && !request.url().startsWith('data:')) problems.push(`request to another origin: ${request.url()}`)
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

  for (const dialect of dialects()) {
    await t.test(dialect, async (t) => {
      // The agents of the runs test listen on 127.0.0.1.
      const { app, url } = await serve(dialect, { TANDEM_EGRESS_ALLOW: '127.0.0.0/8' })
      t.after(() => app.close())
      const { page, problems, eventStreams, close } = await openPage(browser, url)
      t.after(close)
      const current = () => page
      let streamId = ''

      await step(t, current, `${dialect} streams: create one with the keyboard alone`, async () => {
        await page.goto('/')
        await page.getByRole('heading', { name: 'Streams' }).waitFor()
        await assertAccessible(page, 'streams (empty)')
        const name = page.getByRole('textbox', { name: 'Stream name' })
        for (let i = 0; i < 30 && !(await name.evaluate((el) => el === (globalThis as any).document.activeElement)); i++) await page.keyboard.press('Tab')
        assert.ok(await name.evaluate((el) => el === (globalThis as any).document.activeElement), 'Stream name reachable with Tab')
        await page.keyboard.type('Operations')
        await page.keyboard.press('Enter')
        await page.getByRole('link', { name: 'Operations' }).waitFor(WAIT)
        await page.getByRole('textbox', { name: 'Stream name' }).fill('Second stream')
        await page.getByRole('button', { name: 'Create stream' }).click()
        await page.getByRole('link', { name: 'Second stream' }).waitFor(WAIT)
        const links = await page.getByRole('list').first().getByRole('link').allTextContents()
        assert.deepEqual(links, ['Operations', 'Second stream'], 'oldest first')
        const listed = (await send(app, 'GET', '/api/streams')).json().data
        streamId = listed[0].id
        await assertAccessible(page, 'streams')
      })

      await step(t, current, `${dialect} chat: send rich text, edit, see earlier versions`, async () => {
        await page.getByRole('link', { name: 'Operations' }).click()
        await page.waitForURL(`**/streams/${streamId}`)
        await page.getByRole('tab', { name: 'Chat' }).waitFor()
        await assertAccessible(page, 'stream chat')
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
        await assertAccessible(page, 'chat with messages and history')
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
        await assertAccessible(page, 'chat edit conflict')
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
        // The README's picture: always as an artefact, into docs/ with TANDEM_UPDATE_SCREENSHOT=1.
        mkdirSync(ARTEFACTS, { recursive: true })
        await page.screenshot({ path: `${ARTEFACTS}/console-${dialect}.png` })
        if (dialect === 'sqlite' && process.env.TANDEM_UPDATE_SCREENSHOT === '1') await page.screenshot({ path: 'docs/console.png' })
      })

      await step(t, current, `${dialect} cycles: draft, refine, save`, async () => {
        await page.getByRole('tab', { name: 'Chat' }).focus()
        await page.keyboard.press('ArrowRight')
        assert.equal(await page.getByRole('tab', { name: 'Cycles' }).getAttribute('aria-selected'), 'true', 'arrow keys move between tabs')
        await page.getByRole('textbox', { name: 'Prompt' }).waitFor()
        await assertAccessible(page, 'cycles')
        await page.getByRole('textbox', { name: 'Prompt' }).fill('When a ticket arrives, triage the ticket, then have @maria approve it.')
        await page.getByRole('button', { name: 'Draft', exact: true }).click()
        const draft = page.getByRole('region', { name: 'Draft' })
        await draft.getByRole('listitem').filter({ hasText: 'Triage ticket' }).filter({ hasText: 'operators: maria' }).waitFor(DRAFT_WAIT)
        await page.getByRole('textbox', { name: 'Prompt' }).fill('Rename Triage ticket to Intake.')
        await page.getByRole('button', { name: 'Refine' }).click()
        await draft.getByText('renamed "Triage ticket" to "Intake"').waitFor(DRAFT_WAIT)
        await draft.getByRole('listitem').filter({ hasText: 'Intake' }).first().waitFor(WAIT)
        await assertAccessible(page, 'cycles with a draft')
        await page.getByRole('button', { name: 'Save cycle' }).click()
        await page.getByRole('button', { name: 'Start run' }).waitFor(WAIT)
        const saved = (await send(app, 'GET', `/api/cycles/streams/${streamId}/cycles`)).json().data
        assert.equal(saved.length, 1)
        assert.deepEqual(saved[0].phasesTemplate.map((p: any) => p.phaseName), ['Intake'])
      })

      await step(t, current, `${dialect} agents: a field error beside its field, then create`, async () => {
        await page.getByRole('link', { name: 'Agents' }).click()
        await page.getByRole('heading', { name: 'Agents' }).waitFor()
        await assertAccessible(page, 'agents (empty)')
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
        await assertAccessible(page, 'agents with a field error')
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
        await assertAccessible(page, 'runs awaiting a decision')
        await waiting.getByRole('textbox', { name: 'Note' }).fill('Shorter, please')
        await waiting.getByRole('button', { name: 'Request changes' }).click()
        await page.locator('.phase.awaiting_decision').getByText('Reply draft, attempt 2 (feedback: Shorter, please)').waitFor(WAIT)
        assert.equal(agent.tasks.length, 2)
        await page.getByRole('button', { name: 'Approve' }).click()
        await page.locator('.phase.awaiting_decision').filter({ hasText: 'Final check' }).waitFor(WAIT)
        await page.getByRole('button', { name: 'Reject' }).click()
        await page.locator('.run .status.rejected').waitFor(WAIT)
        assert.equal(await page.getByRole('button', { name: 'Cancel run' }).count(), 0, 'a finished run cannot be canceled')
        const [run] = (await send(app, 'GET', `/api/cycles/streams/${stream.id}/runs`)).json().data
        assert.equal(run.status, 'rejected')
        assert.deepEqual(run.phases.map((p: any) => [p.status, p.decisions.map((d: any) => `${d.decision} by ${d.handle}`)]), [['succeeded', ['revise by local', 'approve by local']], ['failed', ['reject by local']]])

        // A second run, canceled while it waits.
        await page.getByRole('tab', { name: 'Cycles' }).click()
        await page.getByRole('button', { name: 'Start run' }).click()
        await page.locator('.phase.awaiting_decision').getByText('Reply draft, attempt 1').waitFor(WAIT)
        await page.getByRole('button', { name: 'Cancel run' }).click()
        await page.locator('.run .status.canceled').waitFor(WAIT)
        const runs = (await send(app, 'GET', `/api/cycles/streams/${stream.id}/runs`)).json().data
        assert.deepEqual(runs.map((r: any) => r.status), ['rejected', 'canceled'])
        await assertAccessible(page, 'finished runs')

        // The agent's answers are in the chat, marked as an agent's.
        await page.getByRole('tab', { name: 'Chat' }).click()
        await page.locator('.message.agent').filter({ hasText: 'Reply draft, attempt 2' }).getByText('agent', { exact: true }).waitFor(WAIT)
      })

      await step(t, current, `${dialect} credentials: create, a field error, rename, replace the secret, delete; the secret never shown`, async () => {
        const SECRET = 'sk-console-test-0123456789-wxyz'
        await page.getByRole('link', { name: 'Credentials' }).click()
        await page.getByRole('heading', { name: 'Credentials' }).waitFor()
        await page.getByText('No credentials yet.').waitFor(WAIT)
        await assertAccessible(page, 'credentials (empty)')
        const name = page.getByRole('textbox', { name: 'Credential name' })
        await page.getByLabel('Secret', { exact: true }).fill(SECRET)
        await page.getByRole('button', { name: 'Create credential' }).click()
        // The empty name is refused by the server; its detail is tied to the field, and the secret is cleared.
        await name.and(page.locator('[aria-invalid="true"]')).waitFor(WAIT)
        const describedBy = await name.getAttribute('aria-describedby')
        assert.match((await page.locator(`[id="${describedBy}"]`).textContent()) ?? '', /character|fewer|least|empty/i)
        assert.equal(await page.getByLabel('Secret', { exact: true }).inputValue(), '')
        await assertAccessible(page, 'credentials with a field error')
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
        await assertAccessible(page, 'unknown stream')
      })

      await t.test(`${dialect} no request left this origin and nothing broke the CSP`, () => {
        assert.deepEqual(problems, [])
      })
    })
  }

  await t.test('where keys are required: a key prompt, the signed-in caller, sign-out', async (t) => {
    const dialect = dialects()[0]!
    const { app, url } = await serve(dialect, { TANDEM_AUTH: 'required' })
    t.after(() => app.close())
    const workspaceId = await ensureWorkspace(app.database.db, 'default')
    const { key } = await createApiKey(app.database.db, { workspaceId, name: 'Maria', role: 'admin' })
    const { key: memberKey } = await createApiKey(app.database.db, { workspaceId, name: 'Sam', role: 'member' })
    const { page, problems, close } = await openPage(browser, url)
    t.after(close)
    await step(t, () => page, 'key prompt', async () => {
      await page.goto('/')
      const input = page.getByLabel('API key')
      await input.waitFor(WAIT)
      await assertAccessible(page, 'key prompt')
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
      await assertAccessible(page, 'agents refused to a member')
      assert.deepEqual(problems, [])
    })
  })
})

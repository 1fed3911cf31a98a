// The built-in agent templates (ids `builtin:<slug>`): read-only, the same on every server, in this order.
// Each is a starting point a team would keep: the instructions say what the agent is for, what it must not
// do and the shape of its answer. Models are the vendors' current general-purpose ones; change config.model
// after creating the agent, or create it with your own `config`.
import type { TemplateAgent } from './schemas.js'
import { ASK_OPERATOR } from '../waits/kinds.js'

export interface BuiltinTemplate {
  id: `builtin:${string}`
  name: string
  description: string
  agent: TemplateAgent
}

const CLAUDE = { model: 'claude-sonnet-4-5', maxTokens: 4096 }
const MISTRAL = { model: 'mistral-large-latest', maxTokens: 4096 }

const TRIAGE = `You triage incoming requests for the team in this stream.

For each request:
1. Classify it as exactly one of: bug, question, feature request, incident, other.
2. Set a priority: P1 (people are blocked or data is at risk), P2 (a workaround exists), P3 (everything else).
3. Say who should take it, by team or role, when the request makes it clear; otherwise say "unassigned".
4. Give the one next step that moves it forward (a question to ask the requester, a log to read, a person to ask).

Rules:
- Read the recent messages of the stream before answering: a duplicate of an open request says so and links to it.
- Never invent facts, versions or ticket numbers. When something you need is missing, ask for it in the next step.
- If the request describes an outage, a security problem or lost data, make it P1 and say so in the first line.

Answer in this shape, and nothing else:
Type: <type>
Priority: <P1|P2|P3>
Owner: <team or role, or unassigned>
Summary: <one sentence in plain words>
Next step: <one action>`

const RESEARCH = `You research questions for the team and report what is known, how sure it is, and where it comes from.

How to work:
- Restate the question in one line, so that a misunderstanding shows at once.
- Separate what the sources say from what you infer. Mark every inference as such.
- Prefer primary sources (specifications, official documentation, the code itself, data) to summaries of them.
- When sources disagree, say so and give both sides; do not pick one silently.
- If the question cannot be answered with what you have, say what is missing and ask the operator for it.

Answer with:
1. The answer in at most three sentences.
2. The evidence, as a short list, each item with its source.
3. Open questions and what would settle them.
4. Confidence: high, medium or low, with one sentence saying why.`

const WRITING = `You write and edit text for the team: announcements, release notes, help pages, replies to customers.

Style:
- Plain words, short sentences, active voice. Say the important thing first.
- Write for the reader named in the task; when none is named, write for a busy colleague who knows the product.
- Keep the facts you are given exactly: names, numbers, dates, versions. Never add facts that were not given.
- Match the length asked for. When none is asked for, be brief.
- No marketing superlatives, no filler ("we are excited to announce"), no emoji unless asked.

When you edit someone's draft, keep their voice and say in one line at the end what you changed and why.
When something needed for the text is missing (a date, a link, a name), leave a visible placeholder like
[DATE] and list the placeholders at the end.`

const REVIEW = `You review work the team hands you: a change, a document, a plan or a previous phase's output.

How to review:
- Start with a verdict on the first line: "Approve", "Approve with changes" or "Request changes".
- List the problems that matter, most serious first. For each: where it is, what is wrong, why it matters,
  and a concrete fix. Quote the exact words or lines you mean.
- Check correctness first, then risk (security, data loss, things that are hard to undo), then clarity.
  Style nits go last, and only if there is nothing more important; mark them "nit".
- Do not rewrite the work yourself and do not repeat what is fine. Praise only what should be kept on purpose.
- If you cannot judge something (missing context, a system you cannot see), say so instead of guessing.`

const WEBHOOK = `This agent is your own service: Tandem POSTs each task to the endpointUrl, signed with Standard Webhooks
headers (verify webhook-signature with the credential before acting). Answer at once with 200 and
{ "output": { "text": "…" } }, or with 202 and later POST the answer to the task's result.url with its token.
Use the task's phase goal and instructions, the previous phases' outputs and the recent messages it carries.`

const TOKEN_ONLY = `This agent is a worker that runs where Tandem cannot call it (a laptop, a CI job, a private network). It
claims its tasks with an agent key (POST /api/tasks/claim), works on each, and posts the answer to the task's
result.url with the task token. Keep the worker's lease short and claim again after a crash: a task whose
lease runs out goes back to the queue.`

export const BUILTIN_TEMPLATES: readonly BuiltinTemplate[] = [
  {
    id: 'builtin:claude-triage',
    name: 'Triage (Claude)',
    description: 'Classifies each incoming request, sets a priority and an owner, and names the next step. Answers in a fixed five-line shape.',
    agent: { providerType: 'claude', config: { ...CLAUDE, maxTokens: 1024 }, instructions: TRIAGE, capabilities: { streaming: true, tools: ['tandem.read_messages'] } },
  },
  {
    id: 'builtin:mistral-triage',
    name: 'Triage (Mistral)',
    description: 'The triage assistant on Mistral: type, priority, owner, summary and next step for each request.',
    agent: { providerType: 'mistral', config: { ...MISTRAL, maxTokens: 1024 }, instructions: TRIAGE, capabilities: { streaming: true, tools: ['tandem.read_messages'] } },
  },
  {
    id: 'builtin:claude-research',
    name: 'Research assistant (Claude)',
    description: 'Answers questions with evidence and sources, separates facts from inferences, and asks the operator when something is missing.',
    agent: { providerType: 'claude', config: CLAUDE, instructions: RESEARCH, capabilities: { streaming: true, tools: ['tandem.read_messages', ASK_OPERATOR] } },
  },
  {
    id: 'builtin:mistral-research',
    name: 'Research assistant (Mistral)',
    description: 'The research assistant on Mistral: a short answer, the evidence with sources, open questions and a confidence.',
    agent: { providerType: 'mistral', config: MISTRAL, instructions: RESEARCH, capabilities: { streaming: true, tools: ['tandem.read_messages', ASK_OPERATOR] } },
  },
  {
    id: 'builtin:claude-writer',
    name: 'Writer and editor (Claude)',
    description: 'Drafts and edits announcements, release notes, help pages and replies in plain words, keeping every given fact exact.',
    agent: { providerType: 'claude', config: CLAUDE, instructions: WRITING, capabilities: { streaming: true, tools: [] } },
  },
  {
    id: 'builtin:mistral-writer',
    name: 'Writer and editor (Mistral)',
    description: 'The writing assistant on Mistral: plain, brief text with placeholders for anything missing.',
    agent: { providerType: 'mistral', config: MISTRAL, instructions: WRITING, capabilities: { streaming: true, tools: [] } },
  },
  {
    id: 'builtin:claude-reviewer',
    name: 'Reviewer (Claude)',
    description: 'Reviews a change, a document or a previous phase: a verdict first, then the problems that matter with concrete fixes.',
    agent: { providerType: 'claude', config: CLAUDE, instructions: REVIEW, capabilities: { streaming: true, tools: ['tandem.read_messages'] } },
  },
  {
    id: 'builtin:mistral-reviewer',
    name: 'Reviewer (Mistral)',
    description: 'The reviewer on Mistral: verdict, problems most serious first, fixes, and nits last.',
    agent: { providerType: 'mistral', config: MISTRAL, instructions: REVIEW, capabilities: { streaming: true, tools: ['tandem.read_messages'] } },
  },
  {
    id: 'builtin:webhook-agent',
    name: 'Your own service (webhook)',
    description: 'An agent you run yourself behind an HTTPS endpoint: Tandem POSTs each task to endpointUrl, signed with the credential. Set endpointUrl and credentialId.',
    agent: { providerType: 'custom_webhook', config: {}, instructions: WEBHOOK, capabilities: { streaming: false, tools: [] } },
  },
  {
    id: 'builtin:token-only-worker',
    name: 'Worker that claims its tasks (token only)',
    description: 'An agent Tandem never calls: a worker claims its tasks with an agent key and posts each answer back. For laptops, CI jobs and private networks.',
    agent: { providerType: 'custom_token_only', config: {}, instructions: TOKEN_ONLY, capabilities: { streaming: false, tools: [] } },
  },
]

export function findBuiltinTemplate(id: string): BuiltinTemplate | undefined {
  return BUILTIN_TEMPLATES.find((template) => template.id === id)
}

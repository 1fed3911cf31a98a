// The console's shell: header (navigation, who is signed in, the theme, shortcuts), the command palette,
// and the routes of docs/console.md.
import { lazy, Suspense } from 'react'
import { Link, Route, Switch, useRoute } from 'wouter'
import { AuthGate, useAuth } from './auth'
import { ErrorBoundary } from './boundary'
import { InboxLink } from './inbox'
import { InboxPage } from './views/InboxPage'
import { useCommands } from './palette'
import { ThemeToggle } from './theme'
import { StreamsPage } from './views/Streams'
import { StreamPage } from './views/Stream'
import { AgentsPage } from './views/Agents'
import { CredentialsPage } from './views/Credentials'
// Scorecards (uPlot) and the MCP servers page load on demand: the first load stays within its budget.
const ScorecardsPage = lazy(() => import('./views/Scorecards').then((m) => ({ default: m.ScorecardsPage })))
const ScorecardPage = lazy(() => import('./views/Scorecards').then((m) => ({ default: m.ScorecardPage })))
const McpServersPage = lazy(() => import('./views/McpServersPage').then((m) => ({ default: m.McpServersPage })))

function NavLink({ href, children }: { href: string; children: string }) {
  const [active] = useRoute(href === '/' ? '/' : href)
  const [inStream] = useRoute('/streams/*')
  return <Link href={href} aria-current={active || (href === '/' && inStream) ? 'page' : undefined}>{children}</Link>
}

function Header({ openPalette, openShortcuts }: { openPalette: () => void; openShortcuts: () => void }) {
  const { me, signOut, hasKey } = useAuth()
  const [inInbox] = useRoute('/inbox')
  return (
    <header className="top">
      <a className="skip" href="#main">Skip to content</a>
      <nav aria-label="Main">
        <ul>
          <li><Link href="/" className="brand"><span className="brand-mark" aria-hidden="true" />Tandem</Link></li>
          <li><NavLink href="/">Streams</NavLink></li>
          <li><NavLink href="/agents">Agents</NavLink></li>
          <li><NavLink href="/credentials">Credentials</NavLink></li>
          <li><NavLink href="/insights">Scorecards</NavLink></li>
          <li><NavLink href="/mcp-servers">MCP servers</NavLink></li>
          <InboxLink current={inInbox} />
        </ul>
        <ul>
          <li><button type="button" className="secondary small" onClick={openPalette} aria-keyshortcuts="Control+K Meta+K">Search <kbd>Ctrl K</kbd></button></li>
          <li><button type="button" className="ghost small" onClick={openShortcuts} aria-keyshortcuts="?" title="Keyboard shortcuts (?)">?<span className="sr-only"> Keyboard shortcuts</span></button></li>
          <li><ThemeToggle /></li>
          {me ? <li className="who">Signed in as <strong>@{me.handle}</strong> ({me.role})</li> : null}
          {hasKey ? <li><button type="button" className="secondary small" onClick={signOut}>Sign out</button></li> : null}
        </ul>
      </nav>
    </header>
  )
}

function Shell() {
  const { dialogs, openPalette, openShortcuts } = useCommands()
  return (
    <>
      <Header openPalette={openPalette} openShortcuts={openShortcuts} />
      <main id="main" tabIndex={-1} className="container">
        <ErrorBoundary>
          <Switch>
            <Route path="/" component={StreamsPage} />
            <Route path="/streams/:id">{(params) => <StreamPage id={params.id} />}</Route>
            <Route path="/streams/:id/runs/:runId">{(params) => <StreamPage key={params.runId} id={params.id} runId={params.runId} />}</Route>
            <Route path="/mcp-servers"><Suspense fallback={<p aria-busy="true">Loading…</p>}><McpServersPage /></Suspense></Route>
            <Route path="/agents" component={AgentsPage} />
            <Route path="/credentials" component={CredentialsPage} />
            <Route path="/inbox" component={InboxPage} />
            <Route path="/insights"><Suspense fallback={<p aria-busy="true">Loading…</p>}><ScorecardsPage /></Suspense></Route>
            <Route path="/insights/agents/:id">{(params) => <Suspense fallback={<p aria-busy="true">Loading…</p>}><ScorecardPage id={params.id} /></Suspense>}</Route>
            <Route><h1>Page not found</h1><p><Link href="/">Back to the streams</Link></p></Route>
          </Switch>
        </ErrorBoundary>
      </main>
      {dialogs}
    </>
  )
}

export function App() {
  return (
    <AuthGate>
      <Shell />
    </AuthGate>
  )
}

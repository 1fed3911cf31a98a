// The console's shell: header (who is signed in), navigation, and the routes of CONSOLE.md.
import { Link, Route, Switch, useRoute } from 'wouter'
import { AuthGate, useAuth } from './auth'
import { ErrorBoundary } from './boundary'
import { StreamsPage } from './views/Streams'
import { StreamPage } from './views/Stream'
import { AgentsPage } from './views/Agents'
import { CredentialsPage } from './views/Credentials'

function NavLink({ href, children }: { href: string; children: string }) {
  const [active] = useRoute(href === '/' ? '/' : href)
  return <Link href={href} aria-current={active ? 'page' : undefined}>{children}</Link>
}

function Header() {
  const { me, signOut, hasKey } = useAuth()
  return (
    <header className="top">
      <a className="skip" href="#main">Skip to content</a>
      <span className="brand">Tandem</span>
      <nav aria-label="Main">
        <NavLink href="/">Streams</NavLink>
        <NavLink href="/agents">Agents</NavLink>
        <NavLink href="/credentials">Credentials</NavLink>
      </nav>
      <span className="who">
        {me ? <>Signed in as <strong>@{me.handle}</strong> ({me.role})</> : null}
        {hasKey ? <button type="button" onClick={signOut}>Sign out</button> : null}
      </span>
    </header>
  )
}

export function App() {
  return (
    <AuthGate>
      <Header />
      <main id="main" tabIndex={-1}>
        <ErrorBoundary>
        <Switch>
          <Route path="/" component={StreamsPage} />
          <Route path="/streams/:id">{(params) => <StreamPage id={params.id} />}</Route>
          <Route path="/agents" component={AgentsPage} />
          <Route path="/credentials" component={CredentialsPage} />
          <Route><h1>Page not found</h1><p><Link href="/">Back to the streams</Link></p></Route>
        </Switch>
        </ErrorBoundary>
      </main>
    </AuthGate>
  )
}

// Who is signed in: GET /api/me with the tab's key (or none, key-less on a loopback bind); a key prompt when
// the API answers 401; sign-out forgets the key.
import { createContext, useContext, useEffect, useState, type FormEvent, type ReactNode } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ApiError, apiKey, request, unwrap, whenUnauthorized, type Me } from './api/client'
import { ErrorMessage } from './ui'

interface Auth { me: Me | null; signOut: () => void; hasKey: boolean }
const AuthContext = createContext<Auth>({ me: null, signOut: () => {}, hasKey: false })
export const useAuth = () => useContext(AuthContext)

/** May this person edit a message, decide a phase…: admins always; unknown identity lets the server decide. */
export function canActAs(me: Me | null, authorId: string) {
  return !me || me.role === 'admin' || me.principalId === authorId
}

export function AuthGate({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient()
  const [needsKey, setNeedsKey] = useState(false)
  const [hasKey, setHasKey] = useState(apiKey.get() !== null)
  useEffect(() => whenUnauthorized(() => setNeedsKey(true)), [])
  const me = useQuery({
    queryKey: ['me', hasKey],
    queryFn: async () => {
      try {
        return await unwrap(api.GET('/api/me'))
      } catch (error) {
        // A service without /api/me (older than the identity feature) still works, identity unknown.
        if (error instanceof ApiError && error.status === 404) return null
        throw error
      }
    },
    retry: false,
  })
  const signIn = (key: string) => {
    apiKey.set(key)
    setHasKey(true)
    setNeedsKey(false)
    void queryClient.resetQueries()
  }
  const signOut = () => {
    apiKey.clear()
    setHasKey(false)
    queryClient.clear()
    setNeedsKey(true)
  }
  if (needsKey || (me.error instanceof ApiError && me.error.status === 401)) return <KeyPrompt onKey={signIn} />
  return <AuthContext.Provider value={{ me: me.data ?? null, signOut, hasKey }}>{children}</AuthContext.Provider>
}

function KeyPrompt({ onKey }: { onKey: (key: string) => void }) {
  const [key, setKey] = useState('')
  const [error, setError] = useState<unknown>(null)
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setError(null)
    try {
      await request('GET', '/api/me', undefined, { authorization: `Bearer ${key.trim()}` })
      onKey(key.trim())
    } catch (e) {
      setError(e instanceof ApiError && e.status === 401 ? new Error('that key was not accepted') : e)
    }
  }
  return (
    <main className="key-prompt">
      <h1>Tandem console</h1>
      <form onSubmit={submit} className="card">
        <p>This Tandem needs an API key. It is kept in this tab only (session storage).</p>
        <label htmlFor="api-key">API key</label>
        <input id="api-key" type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} required />
        <button type="submit">Sign in</button>
        <ErrorMessage error={error} />
      </form>
    </main>
  )
}

// The command palette (Ctrl+K / ⌘K): jump to a stream, an agent or a page, or run a command; and the
// keyboard shortcuts, listed in a "?" dialog. Both are native <dialog>s (focus kept inside, Escape closes,
// no style injected), so the strict CSP holds.
import { useEffect, useId, useLayoutEffect, useRef, useState, type KeyboardEvent, type ReactNode } from 'react'
import { useLocation } from 'wouter'
import { agentText, useAgentLabels, useAgents } from './agents'
import { useInbox } from './inbox'
import { toggleTheme } from './theme'
import { useStreams } from './views/Streams'

export const SHORTCUTS: Array<[string[], string]> = [
  [['Ctrl', 'K'], 'Open the command palette (⌘K on a Mac)'],
  [['?'], 'Show these shortcuts'],
  [['g', 's'], 'Go to the streams'],
  [['g', 'a'], 'Go to the agents'],
  [['g', 'c'], 'Go to the credentials'],
  [['g', 'i'], 'Go to the inbox (where this Tandem has one)'],
  [['Shift', 'D'], 'Switch between the light and the dark theme'],
  [['←', '→'], 'Move between a stream\'s tabs (Chat, Cycles, Runs, Automation)'],
  [['Ctrl', 'Enter'], 'Send the message being written'],
  [['j', '↓'], 'Inbox: next item'],
  [['k', '↑'], 'Inbox: previous item'],
  [['a'], 'Inbox: approve the current decision or tool call (with the note typed)'],
  [['d'], 'Inbox: deny a tool call, or reject a decision (asks to confirm)'],
  [['c'], 'Inbox: request changes (focuses the note)'],
  [['x'], 'Inbox: select the current item'],
  [['Shift', 'A'], 'Inbox: approve the selected items'],
  [['Enter', 'o'], 'Inbox: open the current item\'s run'],
  [['Esc'], 'Inbox: unselect everything'],
  [['Esc'], 'Close a dialog'],
]

function Modal({ open, onClose, label, className, children }: { open: boolean; onClose: () => void; label: string; className?: string; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null)
  const closeRef = useRef(onClose)
  closeRef.current = onClose
  // In the commit, not after paint: the dialog is open exactly when the state says so, with no moment in
  // between for a key press to see one and not the other.
  useLayoutEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    if (open && !dialog.open) dialog.showModal()
    if (!open && dialog.open) dialog.close()
  }, [open])
  // However the dialog closes (Escape, the browser's close request, a click outside), the state follows.
  // Escape and the browser's close request announce themselves with `cancel`, synchronously: the state
  // follows there and then. `close` itself comes later, as a task of its own; by then the dialog may
  // have been opened again (Ctrl+K pressed meanwhile), and a stale close must not shut it.
  useLayoutEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    const cancel = () => closeRef.current()
    const closed = () => { if (!dialog.open) closeRef.current() }
    dialog.addEventListener('cancel', cancel)
    dialog.addEventListener('close', closed)
    return () => {
      dialog.removeEventListener('cancel', cancel)
      dialog.removeEventListener('close', closed)
    }
  }, [])
  return (
    <dialog ref={ref} aria-label={label} className={className} onClick={(e) => { if (e.target === ref.current) onClose() }}>
      {open ? <article>{children}</article> : null}
    </dialog>
  )
}

interface Command { id: string; kind: string; label: string; run: () => void }

function CommandPalette({ open, onClose, onShortcuts }: { open: boolean; onClose: () => void; onShortcuts: () => void }) {
  const [, navigate] = useLocation()
  const streams = useStreams()
  const agents = useAgents()
  const agentLabel = useAgentLabels()
  const inbox = useInbox()
  const [query, setQuery] = useState('')
  const [active, setActive] = useState(0)
  const listId = useId()
  useEffect(() => {
    if (open) {
      setQuery('')
      setActive(0)
    }
  }, [open])
  const go = (path: string) => () => navigate(path)
  const commands: Command[] = [
    ...(streams.data ?? []).map((s) => ({ id: `stream-${s.id}`, kind: 'Stream', label: s.name, run: go(`/streams/${s.id}`) })),
    ...(agents.data ?? []).map((a) => ({ id: `agent-${a.id}`, kind: 'Agent', label: agentText(agentLabel(a.id)), run: go(`/agents#agent-${a.id}`) })),
    { id: 'page-streams', kind: 'Page', label: 'Streams', run: go('/') },
    { id: 'page-agents', kind: 'Page', label: 'Agents', run: go('/agents') },
    { id: 'page-credentials', kind: 'Page', label: 'Credentials', run: go('/credentials') },
    ...(inbox.data ? [{ id: 'page-inbox', kind: 'Page', label: `Inbox (${inbox.data.length})`, run: go('/inbox') }] : []),
    { id: 'theme', kind: 'Command', label: 'Switch the theme (light or dark)', run: toggleTheme },
    { id: 'shortcuts', kind: 'Command', label: 'Keyboard shortcuts', run: onShortcuts },
  ]
  const words = query.toLowerCase().split(/\s+/).filter(Boolean)
  const matches = commands.filter((c) => words.every((w) => `${c.kind} ${c.label}`.toLowerCase().includes(w))).slice(0, 50)
  const selected = Math.min(active, Math.max(matches.length - 1, 0))
  const choose = (command: Command | undefined) => {
    if (!command) return
    onClose()
    command.run()
  }
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'ArrowDown') setActive((selected + 1) % Math.max(matches.length, 1))
    else if (event.key === 'ArrowUp') setActive((selected + matches.length - 1) % Math.max(matches.length, 1))
    else if (event.key === 'Enter') choose(matches[selected])
    else if (event.key === 'Escape') onClose()
    else return
    event.preventDefault()
  }
  return (
    <Modal open={open} onClose={onClose} label="Command palette" className="palette">
      <input
        role="combobox"
        aria-label="Search"
        aria-expanded="true"
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={matches[selected] ? `${listId}-${matches[selected].id}` : undefined}
        placeholder="Jump to a stream, an agent, a page…"
        value={query}
        autoFocus
        onChange={(e) => { setQuery(e.target.value); setActive(0) }}
        onKeyDown={onKeyDown}
      />
      <ul role="listbox" id={listId} aria-label="Results">
        {matches.map((command, i) => (
          <li key={command.id} id={`${listId}-${command.id}`} role="option" aria-selected={i === selected} onClick={() => choose(command)} onMouseMove={() => setActive(i)}>
            <span>{command.label}</span><span className="kind">{command.kind}</span>
          </li>
        ))}
      </ul>
      {matches.length === 0 ? <p className="muted">Nothing matches “{query}”.</p> : null}
      <p className="muted small"><kbd>↑</kbd> <kbd>↓</kbd> to choose, <kbd>Enter</kbd> to go, <kbd>Esc</kbd> to close, <kbd>?</kbd> for every shortcut.</p>
    </Modal>
  )
}

function ShortcutsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Modal open={open} onClose={onClose} label="Keyboard shortcuts">
      <header className="spread"><h2>Keyboard shortcuts</h2><button type="button" className="secondary small" onClick={onClose}>Close</button></header>
      <table className="shortcuts">
        <thead><tr><th scope="col">Keys</th><th scope="col">Does</th></tr></thead>
        <tbody>
          {SHORTCUTS.map(([keys, what]) => (
            <tr key={what}><td>{keys.map((k, i) => <span key={k}>{i > 0 ? (keys[0] === 'g' ? ' then ' : keys[0] === '←' ? ' or ' : ' + ') : null}<kbd>{k}</kbd></span>)}</td><td>{what}</td></tr>
          ))}
        </tbody>
      </table>
    </Modal>
  )
}

export function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null
  // A field left focused inside a dialog that has just closed is not where the person types.
  return !!el && el.isConnected && !el.closest('dialog:not([open])') && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName))
}

/** The global shortcuts, the palette and the shortcuts dialog; `openShortcuts` for the header's "?" button. */
export function useCommands() {
  const [palette, setPalette] = useState(false)
  const [shortcuts, setShortcuts] = useState(false)
  const [, navigate] = useLocation()
  // Attached in the commit, before the page is painted: a key pressed as soon as the page shows is heard.
  useLayoutEffect(() => {
    let pendingG = 0
    const onKey = (event: globalThis.KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
        // Opens, never toggles: a second press while the palette is (or seems) open leaves it open.
        event.preventDefault()
        setShortcuts(false)
        setPalette(true)
        return
      }
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target) || document.querySelector('dialog[open]')) return
      if (event.key === '?') {
        event.preventDefault()
        setShortcuts(true)
      } else if (event.key === 'D' && event.shiftKey) {
        toggleTheme()
      } else if (event.key === 'g') {
        pendingG = Date.now()
      } else if (Date.now() - pendingG < 1500 && ['s', 'a', 'c', 'i'].includes(event.key)) {
        pendingG = 0
        navigate({ s: '/', a: '/agents', c: '/credentials', i: '/inbox' }[event.key]!)
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [navigate])
  const openShortcuts = () => { setPalette(false); setShortcuts(true) }
  const dialogs = (
    <>
      <CommandPalette open={palette} onClose={() => setPalette(false)} onShortcuts={openShortcuts} />
      <ShortcutsDialog open={shortcuts} onClose={() => setShortcuts(false)} />
    </>
  )
  return { dialogs, openPalette: () => setPalette(true), openShortcuts }
}

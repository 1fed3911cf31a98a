// Light and dark themes: the system's preference (prefers-color-scheme) until the person chooses with the
// "Dark theme" toggle; the choice is remembered in local storage and set as <html data-theme>, which the
// stylesheet's tokens follow. Applied before the first render (main.tsx), so no flash and no inline script.
import { useEffect, useState } from 'react'

type Theme = 'light' | 'dark'
const STORAGE = 'tandem.theme'
const systemDark = () => globalThis.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false

function stored(): Theme | null {
  try {
    const value = localStorage.getItem(STORAGE)
    return value === 'light' || value === 'dark' ? value : null
  } catch {
    return null
  }
}

export function applyStoredTheme() {
  const theme = stored()
  if (theme) document.documentElement.dataset.theme = theme
}

const listeners = new Set<() => void>()

export function toggleTheme() {
  const shown = document.documentElement.dataset.theme
  const dark = !(shown === 'dark' || (shown !== 'light' && systemDark()))
  const theme: Theme = dark ? 'dark' : 'light'
  try {
    localStorage.setItem(STORAGE, theme)
  } catch {
    // Storage refused (private mode): the choice lasts for this page.
  }
  document.documentElement.dataset.theme = theme
  for (const listener of listeners) listener()
}

/** Whether the page is dark now: its data-theme (the choice), else the system's preference; follows both. */
export function useDarkTheme(): boolean {
  const read = () => {
    const theme = document.documentElement.dataset.theme
    return theme === 'dark' || (theme !== 'light' && systemDark())
  }
  const [dark, setDark] = useState(read)
  useEffect(() => {
    const update = () => setDark(read())
    listeners.add(update)
    const media = globalThis.matchMedia?.('(prefers-color-scheme: dark)')
    media?.addEventListener('change', update)
    const observer = new MutationObserver(update)
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] })
    return () => {
      listeners.delete(update)
      media?.removeEventListener('change', update)
      observer.disconnect()
    }
  }, [])
  return dark
}

export function ThemeToggle() {
  const dark = useDarkTheme()
  return (
    <button type="button" className="secondary small toggle" aria-pressed={dark} onClick={toggleTheme} title="Dark theme (Shift+D)">
      <span aria-hidden="true">{dark ? '☾' : '☀'}</span> Dark theme
    </button>
  )
}

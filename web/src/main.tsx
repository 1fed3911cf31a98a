import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { App } from './App'
import { applyStoredTheme } from './theme'
import './styles.css'

applyStoredTheme()

const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: (count, error) => count < 2 && !('status' in error && Number(error.status) < 500), refetchOnWindowFocus: false } },
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
)

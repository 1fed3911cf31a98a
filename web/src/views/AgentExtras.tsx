// Pieces of the agent form that speak to newer APIs: the templates to start from (GET /api/agent-templates)
// and the avatar, uploaded as an asset (POST /api/assets with the image as the raw body) whose id the agent keeps.
import { useEffect, useState } from 'react'
import { useMutation, useQuery } from '@tanstack/react-query'
import { api, ApiError, authorize, unwrap, type Asset, type Problem } from '../api/client'
import { Avatar } from '../agents'
import { allPages } from '../pages'
import { describeError, useField } from '../ui'

export function useTemplates() {
  return useQuery({
    queryKey: ['agent-templates'],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/agent-templates', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
    staleTime: 60_000,
  })
}

// What POST /api/assets takes (docs/agents-templates-assets.md); the server checks the bytes again.
const IMAGE_TYPES = 'image/png,image/jpeg,image/webp,image/gif'

async function uploadAsset(file: File): Promise<Asset> {
  const headers = new Headers({ 'content-type': file.type || 'application/octet-stream' })
  authorize(headers)
  const response = await fetch('/api/assets', { method: 'POST', headers, body: file })
  if (!response.ok) {
    let problem: Problem = { status: response.status }
    try {
      problem = (await response.json()) as Problem
    } catch {
      problem.detail = `${response.status} ${response.statusText}`
    }
    throw new ApiError(response.status, problem)
  }
  return (await response.json()) as Asset
}

/** Upload the picture as an asset and keep its id; the server's detail (413, 415, 422) is shown beside the field. */
export function AvatarUpload({ agentId, name, assetId, serverError, onChange }: {
  agentId: string; name: string; assetId: string; serverError: ReturnType<typeof useField>; onChange: (assetId: string) => void
}) {
  const [inputKey, setInputKey] = useState(0)
  const upload = useMutation({ mutationFn: uploadAsset, onSuccess: (asset) => onChange(asset.id) })
  const { reset } = upload
  // The form was emptied (an agent created) or the avatar removed: the file input forgets its file too.
  useEffect(() => {
    if (assetId) return
    setInputKey((k) => k + 1)
    reset()
  }, [assetId, reset])
  const id = serverError.input.id
  const uploadError = upload.error ? describeError(upload.error) : null
  const describedBy = uploadError ? `${id}-upload-error` : serverError.describedBy
  return (
    <div className="field">
      <label htmlFor={id}>Avatar</label>
      <div className="agent-pick">
        <Avatar label={{ id: agentId, name: name || '?', hint: null, known: true, avatarAssetId: assetId || null }} />
        <input
          key={inputKey} id={id} type="file" accept={IMAGE_TYPES} aria-invalid={uploadError || serverError.message ? true : undefined}
          aria-describedby={describedBy} aria-busy={upload.isPending || undefined}
          onChange={(e) => {
            const file = e.target.files?.[0]
            if (file) upload.mutate(file)
          }}
        />
        {assetId ? (
          <button type="button" className="ghost small" onClick={() => onChange('')}>Remove avatar</button>
        ) : null}
      </div>
      {upload.isPending ? <small className="muted" aria-live="polite">Uploading…</small> : null}
      {uploadError ? <span id={`${id}-upload-error`} className="field-error">The picture was not uploaded: {uploadError}</span> : serverError.message}
      <small className="muted">PNG, JPEG, WebP or GIF; at most 1 MiB and 4096 × 4096 pixels.</small>
    </div>
  )
}

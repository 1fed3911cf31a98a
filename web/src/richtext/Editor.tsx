// The rich-text editor (TipTap): the four styles and paragraph direction, with a toolbar of toggle buttons
// and keyboard shortcuts (Ctrl+B, Ctrl+I, Ctrl+Shift+S, Ctrl+E; Ctrl+Enter submits).
import { useEffect, useImperativeHandle, type Ref } from 'react'
import { Extension } from '@tiptap/core'
import { EditorContent, useEditor, useEditorState } from '@tiptap/react'
import { UndoRedo } from '@tiptap/extensions'
import { richTextExtensions } from './extensions'
import { contentToDoc, docToContent, type Content } from './mapping'

export interface EditorHandle {
  content(): Content
  setContent(content: Content): void
  focus(): void
}

interface Props {
  label: string
  initial: Content
  onSubmit: () => void
  describedBy?: string | undefined
  handle: Ref<EditorHandle>
}

export function RichTextEditor({ label, initial, onSubmit, describedBy, handle }: Props) {
  const editor = useEditor({
    extensions: [
      ...richTextExtensions,
      UndoRedo,
      Extension.create({ name: 'submit', addKeyboardShortcuts: () => ({ 'Mod-Enter': () => (onSubmit(), true) }) }),
    ],
    content: contentToDoc(initial),
    injectCSS: false,
    editorProps: {
      attributes: {
        role: 'textbox',
        'aria-multiline': 'true',
        'aria-label': label,
        class: 'editor-area',
        ...(describedBy ? { 'aria-describedby': describedBy } : {}),
      },
    },
  })
  useEffect(() => {
    if (!editor) return
    const area = editor.view.dom
    if (describedBy) area.setAttribute('aria-describedby', describedBy)
    else area.removeAttribute('aria-describedby')
  }, [editor, describedBy])
  useImperativeHandle(handle, () => ({
    content: () => docToContent(editor.getJSON()),
    setContent: (content) => editor.commands.setContent(contentToDoc(content)),
    focus: () => editor.commands.focus(),
  }), [editor])
  const active = useEditorState({
    editor,
    selector: ({ editor: e }) => ({
      bold: e.isActive('bold'),
      italic: e.isActive('italic'),
      strike: e.isActive('strike'),
      code: e.isActive('code'),
      rtl: e.isActive('paragraph', { direction: 'rtl' }),
    }),
  })
  const toggle = (name: 'bold' | 'italic' | 'strike' | 'code') => editor.chain().focus().toggleMark(name).run()
  return (
    <div className="editor">
      <div role="toolbar" aria-label={`${label} formatting`} className="toolbar">
        <button type="button" aria-pressed={active.bold} onClick={() => toggle('bold')} title="Bold (Ctrl+B)"><b>B</b><span className="sr-only">Bold</span></button>
        <button type="button" aria-pressed={active.italic} onClick={() => toggle('italic')} title="Italic (Ctrl+I)"><i>I</i><span className="sr-only">Italic</span></button>
        <button type="button" aria-pressed={active.strike} onClick={() => toggle('strike')} title="Strikethrough (Ctrl+Shift+S)"><s>S</s><span className="sr-only">Strikethrough</span></button>
        <button type="button" aria-pressed={active.code} onClick={() => toggle('code')} title="Code (Ctrl+E)"><code>{'<>'}</code><span className="sr-only">Code</span></button>
        <button
          type="button"
          aria-pressed={active.rtl}
          onClick={() => editor.chain().focus().updateAttributes('paragraph', { direction: active.rtl ? null : 'rtl' }).run()}
          title="Right-to-left paragraph"
        >
          ⇐<span className="sr-only">Right-to-left</span>
        </button>
      </div>
      <EditorContent editor={editor} />
    </div>
  )
}

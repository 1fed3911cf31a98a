// The editor's schema: exactly the nodes and marks the rich text of docs/api-contract.md can express (see mapping.ts), nothing more.
import { Node, type Extensions } from '@tiptap/core'
import Document from '@tiptap/extension-document'
import Paragraph from '@tiptap/extension-paragraph'
import Text from '@tiptap/extension-text'
import Bold from '@tiptap/extension-bold'
import Italic from '@tiptap/extension-italic'
import Strike from '@tiptap/extension-strike'
import Code from '@tiptap/extension-code'
import HardBreak from '@tiptap/extension-hard-break'

const RichTextBlock = Node.create({
  name: 'richTextBlock',
  content: 'paragraph*',
  defining: true,
  parseHTML: () => [{ tag: 'div[data-rich-text]' }],
  renderHTML: () => ['div', { 'data-rich-text': '', class: 'rich-text' }, 0],
})

const DirectedParagraph = Paragraph.extend({
  addAttributes() {
    return {
      direction: {
        default: null,
        parseHTML: (element) => {
          const dir = element.getAttribute('dir')
          return dir === 'ltr' || dir === 'rtl' ? dir : null
        },
        renderHTML: (attributes) => (attributes.direction ? { dir: attributes.direction } : {}),
      },
    }
  },
})

/** The schema without editing behaviour (the property test builds documents with it). */
export const richTextExtensions: Extensions = [
  Document.extend({ content: 'richTextBlock+' }),
  RichTextBlock,
  DirectedParagraph,
  Text,
  Bold,
  Italic,
  Strike,
  // The spec lets code combine with the other styles; TipTap's code mark excludes them by default.
  Code.extend({ excludes: '' }),
  HardBreak,
]

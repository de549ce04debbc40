import { describe, expect, it } from 'vitest';
import { configOf, credentialsOf, EMPTY_INBOX, fieldsOf } from './inbox-form';
import { conversationIdOf } from './model';

describe("the inbox form's request", () => {
  it('sends each channel only its own settings of CONTRACT §8, with the FAQ entries that are filled in', () => {
    const faq = [
      { question: ' Hours? ', answer: '9 to 5' },
      { question: 'half', answer: '' },
    ];
    expect(configOf({ ...EMPTY_INBOX, channel: 'api', url: ' https://x.example/in ', phoneNumberId: '123', faq })).toEqual({
      url: 'https://x.example/in',
      faq: [{ question: 'Hours?', answer: '9 to 5' }],
    });
    expect(configOf({ ...EMPTY_INBOX, channel: 'whatsapp', phoneNumberId: '123', url: 'https://ignored' })).toEqual({ phoneNumberId: '123', faq: [] });
    expect(configOf({ ...EMPTY_INBOX, channel: 'email', address: 'help@shop.example', fromName: '' })).toEqual({ address: 'help@shop.example', faq: [] });
    expect(configOf({ ...EMPTY_INBOX, channel: 'web', allowedOrigins: 'https://a.example, https://b.example\nhttps://c.example' })).toEqual({
      allowedOrigins: ['https://a.example', 'https://b.example', 'https://c.example'],
      faq: [],
    });
    expect(configOf({ ...EMPTY_INBOX, channel: 'telegram', url: 'https://ignored' })).toEqual({ faq: [] });
  });

  it('sends credentials only for the channels that have them, and only those typed in (empty keeps the stored ones)', () => {
    expect(credentialsOf({ ...EMPTY_INBOX, channel: 'whatsapp', accessToken: 'EAAG', appSecret: ' s3cret ' })).toEqual({
      accessToken: 'EAAG',
      appSecret: 's3cret',
    });
    expect(credentialsOf({ ...EMPTY_INBOX, channel: 'whatsapp', accessToken: '', appSecret: 'new' })).toEqual({ appSecret: 'new' });
    expect(credentialsOf({ ...EMPTY_INBOX, channel: 'telegram', botToken: '' })).toBeUndefined();
    expect(credentialsOf({ ...EMPTY_INBOX, channel: 'telegram', botToken: '123:abc' })).toEqual({ botToken: '123:abc' });
    expect(credentialsOf({ ...EMPTY_INBOX, channel: 'api', botToken: 'stray' })).toBeUndefined();
  });

  it('reads an inbox back into the form, credentials left empty', () => {
    const fields = fieldsOf({
      id: 'inb_1',
      name: 'Chat',
      channel: 'web',
      projectId: 'prj_1',
      bot: { enabled: true },
      inboundUrl: 'u',
      createdAt: '',
      updatedAt: '',
      config: { allowedOrigins: ['https://a.example', 'https://b.example'], faq: [{ question: 'Q', answer: 'A' }] },
    });
    expect(fields).toMatchObject({
      name: 'Chat',
      channel: 'web',
      allowedOrigins: 'https://a.example\nhttps://b.example',
      botEnabled: true,
      faq: [{ question: 'Q', answer: 'A' }],
      accessToken: '',
      botToken: '',
    });
    expect(configOf(fields)).toEqual({ allowedOrigins: ['https://a.example', 'https://b.example'], faq: [{ question: 'Q', answer: 'A' }] });
  });
});

describe('organization stream events', () => {
  it('name the conversation they are about, in each shape the stream sends', () => {
    expect(conversationIdOf({ message: { conversationId: 'conv_1' }, conversation: { id: 'conv_1' } })).toBe('conv_1');
    expect(conversationIdOf({ message: {}, conversationId: 'conv_2' })).toBe('conv_2');
    expect(conversationIdOf({ id: 'evt', type: 'message.sent', payload: { message: { conversationId: 'conv_3' }, conversationId: 'conv_3' } })).toBe('conv_3');
    expect(conversationIdOf({ payload: { conversation: { id: 'conv_4' } } })).toBe('conv_4');
    expect(conversationIdOf(null)).toBeUndefined();
  });
});

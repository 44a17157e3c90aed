"""The tests' mail server (internal/testenv's StartSMTP): Debian's aiosmtpd, a
real SMTP server, delivering every message it takes into a maildir.

    /usr/bin/python3 smtpd.py --listen 127.0.0.1:PORT --maildir DIR
        [--cert FILE --key FILE [--smtps]] [--user U --password P]
        [--reject ADDRESS]... [--defer ADDRESS]...

--cert and --key: STARTTLS offered (or, with --smtps, TLS from the first
byte). --user and --password: a login (AUTH PLAIN or LOGIN) is required, over
TLS only. --reject: RCPT TO that address is refused for good (550);
--defer: put off (451). Each message gets X-Test-TLS (yes or no),
X-Test-Login (the user, or nothing) and X-Test-Arrived (nanoseconds since the
epoch) besides aiosmtpd's X-MailFrom and X-RcptTo. It prints "ready" once it
listens, and runs until it is killed.
"""
import argparse
import asyncio
import ssl
import time

from aiosmtpd.handlers import Mailbox
from aiosmtpd.smtp import SMTP, AuthResult


class Handler(Mailbox):
    def __init__(self, maildir, reject, defer):
        super().__init__(maildir)
        self.reject, self.defer = set(reject), set(defer)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.reject:
            return "550 5.1.1 no such mailbox here"
        if address in self.defer:
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        transport = server.transport
        envelope.tls = session.ssl is not None or (
            transport is not None and transport.get_extra_info("ssl_object") is not None)
        return await super().handle_DATA(server, session, envelope)

    def prepare_message(self, session, envelope):
        message = super().prepare_message(session, envelope)
        message["X-Test-TLS"] = "yes" if envelope.tls else "no"
        login = getattr(session, "login_data", None)
        message["X-Test-Login"] = login.decode() if login else ""
        message["X-Test-Arrived"] = str(time.time_ns())
        return message


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", required=True)
    p.add_argument("--maildir", required=True)
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--smtps", action="store_true")
    p.add_argument("--user")
    p.add_argument("--password")
    p.add_argument("--reject", action="append", default=[])
    p.add_argument("--defer", action="append", default=[])
    args = p.parse_args()
    host, port = args.listen.rsplit(":", 1)

    context = None
    if args.cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)

    def authenticate(server, session, envelope, mechanism, login):
        ok = login.login.decode() == args.user and login.password.decode() == args.password
        return AuthResult(success=ok, handled=False, auth_data=login)

    handler = Handler(args.maildir, args.reject, args.defer)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)

    def factory():
        return SMTP(handler, hostname="stagedoor-test-smtp", loop=loop,
                    tls_context=None if args.smtps else context,
                    authenticator=authenticate if args.user else None,
                    auth_required=bool(args.user), auth_require_tls=not args.smtps)

    server = loop.run_until_complete(loop.create_server(
        factory, host=host, port=int(port), ssl=context if args.smtps else None))
    print("ready", flush=True)
    try:
        loop.run_forever()
    finally:
        server.close()


if __name__ == "__main__":
    main()

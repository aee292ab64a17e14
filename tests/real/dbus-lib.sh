# tests/real/dbus-lib.sh: a private dbus-daemon (Debian's dbus package)
# on a socket in the case's directory, and a small GDBus service written
# with python3-gi (sourced by the dbus-*.case files). The service owns
# org.argus.Test and serves method Slow on /t: with "join", the handler
# (in the service's main loop) starts a worker thread that sleeps 2.5 s
# and waits for it before replying; with "relay", the handler hands the
# call to a worker thread that sleeps and replies itself (the reply goes
# out through GDBus's own I/O thread). Each writes the worker's tid to
# DIR/worker. Clients call it with gdbus(1).

dbus_setup() {
	cat > "$D/service.py" <<'PYEOF'
import sys, threading, time
import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib
d, mode = sys.argv[1], sys.argv[2]
XML = ("<node><interface name='org.argus.Test'><method name='Slow'>"
       "<arg type='s' direction='out'/></method></interface></node>")
def work(inv):
    open(d + "/worker", "w").write(str(threading.get_native_id()))
    time.sleep(2.5)
    if inv is not None:
        inv.return_value(GLib.Variant("(s)", ("done",)))
def on_call(conn, sender, path, iface, method, params, inv):
    if mode == "join":
        t = threading.Thread(target=work, args=(None,))
        t.start()
        t.join()
        inv.return_value(GLib.Variant("(s)", ("done",)))
    else:
        threading.Thread(target=work, args=(inv,)).start()
conn = Gio.DBusConnection.new_for_address_sync(sys.argv[3],
    Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
    Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
node = Gio.DBusNodeInfo.new_for_xml(XML)
conn.register_object("/t", node.interfaces[0], on_call, None, None)
conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
    "org.freedesktop.DBus", "RequestName",
    GLib.Variant("(su)", ("org.argus.Test", 4)), None,
    Gio.DBusCallFlags.NONE, -1, None)
open(d + "/ready", "w").write("1")
GLib.MainLoop().run()
PYEOF
	BUS=unix:path=$D/bus
	dbus-daemon --session --nofork --address="$BUS" \
	    --print-pid=3 3> "$D/daemon.pid" > /dev/null 2>&1 &
	remember $!
	wait_for '[ -S "$D/bus" ]'
	$PY "$D/service.py" "$D" "$1" "$BUS" > "$D/service.log" 2>&1 &
	echo $! > "$D/service.pid"
	remember $!
	wait_for '[ -s "$D/ready" ]'
}

# dbus_call: call Slow in the background; sets $client
dbus_call() {
	DBUS_SESSION_BUS_ADDRESS=unix:path=$D/bus gdbus call --session \
	    --dest org.argus.Test --object-path /t \
	    --method org.argus.Test.Slow > "$D/call.out" 2>&1 &
	client=$!
	remember $client
}

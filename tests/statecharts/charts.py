"""Charts the statecharts tests run on both engines.

Every callback records what it received into ``model.log`` (its name, the event, the states it
was given and the payload), so a test can compare the calls python-statemachine makes with the
calls the compiled runtime makes. Callbacks raise on request (``boom=<callback name>`` in the
payload) to compare what happens to the state when a guard or an action fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statemachine import Event, HistoryState, State, StateChart, StateMachine

INJECTED = {
    "event_data",
    "machine",
    "event",
    "model",
    "transition",
    "state",
    "source",
    "target",
    "previous_configuration",
    "new_configuration",
}


class Boom(Exception):
    """Raised by a callback asked to fail."""


class Recorder:
    """A model that records every callback call; flags feed guards."""

    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []
        self.locked = False
        self.ready = True
        self.level = 0

    def __repr__(self) -> str:
        return "Recorder()"


def _id(state: Any) -> Any:
    return None if state is None else state.id


def note(
    model: Recorder,
    name: str,
    event: Any = None,
    state: Any = None,
    source: Any = None,
    target: Any = None,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
) -> None:
    """Record one call; fail if the payload asks this callback to."""
    payload = sorted(
        (k, (type(v).__name__, str(v)) if isinstance(v, Exception) else v)
        for k, v in (kwargs or {}).items()
        if k not in INJECTED
    )
    model.log.append(
        (
            name,
            None if event is None else str(event),
            _id(state),
            _id(source),
            _id(target),
            args,
            tuple(payload),
        )
    )
    if (kwargs or {}).get("boom") == name:
        raise Boom(name)


class Logging:
    """Generic callbacks every recording chart shares (a mixin, as users write them)."""

    model: Recorder

    def on_enter_state(self, event: Any, state: Any, source: Any, target: Any, **kw: Any) -> None:
        note(self.model, "on_enter_state", event, state, source, target, kwargs=kw)

    def on_exit_state(self, event: Any, state: Any, source: Any, target: Any, **kw: Any) -> None:
        note(self.model, "on_exit_state", event, state, source, target, kwargs=kw)

    def before_transition(self, event: Any, source: Any, target: Any, **kw: Any) -> None:
        note(self.model, "before_transition", event, None, source, target, kwargs=kw)

    def after_transition(self, event: Any, state: Any, source: Any, **kw: Any) -> None:
        note(self.model, "after_transition", event, state, source, kwargs=kw)


class Triage(Logging, StateChart[Recorder]):
    """Guards on several transitions of one event; the first enabled one wins."""

    catch_errors_as_events = False

    inbox = State(initial=True)
    small = State()
    large = State()
    rejected = State(final=True)

    route = (
        inbox.to(small, cond="is_small")
        | inbox.to(large, cond="is_large", unless="is_blocked")
        | inbox.to(rejected, cond="is_negative")
    )
    reset = small.to(inbox) | large.to(inbox)
    reject = small.to(rejected) | large.to(rejected)

    def is_small(self, amount: int = 0, **kw: Any) -> bool:
        note(self.model, "is_small", kwargs=kw)
        return 0 <= amount < 10

    def is_large(self, amount: int = 0, **kw: Any) -> bool:
        note(self.model, "is_large", kwargs=kw)
        return amount >= 10

    def is_blocked(self, **kw: Any) -> bool:
        note(self.model, "is_blocked", kwargs=kw)
        return bool(self.model.locked)

    def is_negative(self, amount: int = 0) -> bool:
        return amount < 0

    def on_route(self, source: Any, target: Any, *args: Any, **kw: Any) -> None:
        note(self.model, "on_route", None, None, source, target, args, kw)


class Ticker(Logging, StateChart[Recorder]):
    """An internal self-transition with an action, beside an external one."""

    catch_errors_as_events = False

    idle = State(initial=True)
    stopped = State(final=True)

    tick = idle.to.itself(internal=True, on="count")
    bump = idle.to.itself(on="count")
    stop = idle.to(stopped)

    def count(self, event: Any, amount: int = 1, **kw: Any) -> None:
        self.model.level += amount
        note(self.model, "count", event, kwargs=kw)


class Door(Logging, StateChart[Recorder]):
    """Enter and exit actions in every form python-statemachine accepts, and a final state."""

    catch_errors_as_events = False

    closed = State(initial=True, enter="lights_off", exit=["creak"])
    opened = State(enter="lights_on")
    gone = State(final=True)

    open = closed.to(opened)
    close = opened.to(closed)
    demolish = closed.to(gone) | opened.to(gone)

    def lights_off(self, event: Any, state: Any, **kw: Any) -> None:
        note(self.model, "lights_off", event, state, kwargs=kw)

    def lights_on(self, state: Any, source: Any) -> None:
        note(self.model, "lights_on", None, state, source)

    def creak(self, **kw: Any) -> None:
        note(self.model, "creak", kwargs=kw)

    @opened.exit
    def slam(self, event: Any, **kw: Any) -> None:
        note(self.model, "slam", event, kwargs=kw)

    def on_enter_gone(self, source: Any) -> None:
        note(self.model, "on_enter_gone", None, None, source)

    def on_exit_closed(self, target: Any) -> None:
        note(self.model, "on_exit_closed", None, None, None, target)


class Gate(Logging, StateChart[Recorder]):
    """Guards written as boolean expressions over chart and model names."""

    catch_errors_as_events = False

    shut = State(initial=True)
    ajar = State()
    wide = State()
    done = State(final=True)

    push = shut.to(ajar, cond="ready and not locked") | shut.to(wide, cond="!locked ^ big")
    pull = ajar.to(shut, unless="locked or big") | wide.to(shut, cond="level > 2")
    finish = ajar.to(done, cond="In('ajar')") | wide.to(done, cond="level >= 1 and level <= 3")
    lock = shut.to.itself(internal=True, on="toggle_lock")

    def big(self, amount: int = 0) -> bool:
        note(self.model, "big", kwargs={"amount": amount})
        return amount > 5

    def toggle_lock(self) -> None:
        self.model.locked = not self.model.locked
        note(self.model, "toggle_lock")


class ShopModel(Recorder):
    """A model that provides callbacks of its own, in every form a model can."""

    discount = 0

    def __init__(self) -> None:
        super().__init__()
        self.paid = False

    def can_pay(self, amount: int = 0) -> bool:
        self.log.append(("model.can_pay", amount))
        return amount >= 0

    @property
    def has_items(self) -> bool:
        return self.level > 0

    @staticmethod
    def audit(*args: Any, **kwargs: Any) -> None:
        model = kwargs["model"]
        payload = tuple(sorted((k, v) for k, v in kwargs.items() if k not in INJECTED))
        model.log.append(("model.audit", args, payload))

    def on_enter_state(self, state: Any) -> None:
        self.log.append(("model.on_enter_state", state.id))

    def after_checkout(self, event: Any) -> None:
        self.log.append(("model.after_checkout", str(event)))


class Shop(Logging, StateChart[ShopModel]):
    """Conventions, decorators, validators, model callbacks, a targetless transition, dotted
    events matched by prefix, and positional payloads."""

    catch_errors_as_events = False

    browsing = State(initial=True)
    cart = State()
    paying = State()
    paid = State(final=True)

    add = browsing.to(cart, on="audit") | cart.to.itself(on="audit")
    checkout = cart.to(paying, cond=["has_items", "can_pay"], validators="check_amount")
    pay = paying.to(paid, cond="paid")
    back = paying.to(cart) | cart.to(browsing)
    ping = cart.to(None, on="pong")
    promo_code = Event(cart.to(cart, internal=True, on="apply_code"), id="promo.code")

    @checkout.before
    def remember(self, *args: Any, **kw: Any) -> None:
        note(self.model, "remember", None, None, None, None, args, kw)

    @add.cond
    def not_full(self, **kw: Any) -> bool:
        note(self.model, "not_full", kwargs=kw)
        return self.model.level < 3

    def check_amount(self, amount: int = 0, **kw: Any) -> None:
        note(self.model, "check_amount", kwargs=kw)
        if amount > 100:
            raise ValueError("amount too large")

    def on_add(self, *args: Any, **kw: Any) -> None:
        self.model.level += 1
        note(self.model, "on_add", None, None, None, None, args, kw)

    def pong(self, event: Any, state: Any, target: Any) -> None:
        note(self.model, "pong", event, state, None, target)

    def apply_code(self, code: str = "", **kw: Any) -> None:
        note(self.model, "apply_code", kwargs={"code": code, **kw})

    def on_back(self, previous_configuration: Any, new_configuration: Any) -> None:
        note(
            self.model,
            "on_back",
            None,
            next(iter(new_configuration)),
            next(iter(previous_configuration)),
        )


class Strict(StateMachine):
    """A StateMachine subclass: events without a transition raise, and an internal
    self-transition runs no entry actions."""

    off = State(initial=True)
    on = State()

    switch = off.to(on) | on.to(off)
    hum = on.to.itself(internal=True, on="hummed")
    warm = off.to.itself(cond="cold")

    def hummed(self) -> None:
        self.model.log.append(("hummed",))

    def cold(self, degrees: int = 20) -> bool:
        return degrees < 10

    def on_enter_on(self) -> None:
        self.model.log.append(("on_enter_on",))


class Relay(Logging, StateChart[Recorder]):
    """Actions that send further events: they run after the current one, in order."""

    catch_errors_as_events = False

    a = State(initial=True)
    b = State()
    c = State()

    go = a.to(b, on="forward") | b.to(c) | c.to(a)
    hop = a.to(c) | c.to(b, after="forward_twice") | b.to(a)

    def forward(self) -> None:
        note(self.model, "forward")
        self.send("go", via="forward")

    def forward_twice(self) -> None:
        note(self.model, "forward_twice")
        self.send("hop", via="twice-1")
        self.send("go", via="twice-2")


class Fallible(Logging, StateChart[Recorder]):
    """python-statemachine's default: errors are caught as ``error.execution`` events, handled
    here by transitions; actions raise internal events and send external ones."""

    idle = State(initial=True)
    working = State(enter="on_working")
    broken = State()
    done = State(final=True)

    start = idle.to(working, cond="is_ready", on="begin")
    finish = working.to(idle, before="wrap_up", after="report") | broken.to(done)
    chain = idle.to(working, on="raise_more") | working.to(idle, on="send_more")
    failure = Event(
        working.to(broken, on="record_error") | idle.to.itself(internal=True, on="record_error"),
        id="error.execution",
    )
    repair = broken.to(idle, on="fix")

    def is_ready(self, **kw: Any) -> bool:
        note(self.model, "is_ready", kwargs=kw)
        return bool(self.model.ready)

    def begin(self, **kw: Any) -> None:
        note(self.model, "begin", kwargs=kw)

    def on_working(self, **kw: Any) -> None:
        note(self.model, "on_working", kwargs=kw)

    def wrap_up(self, **kw: Any) -> None:
        note(self.model, "wrap_up", kwargs=kw)

    def report(self, **kw: Any) -> None:
        note(self.model, "report", kwargs=kw)

    def record_error(self, error: Exception, **kw: Any) -> None:
        note(self.model, "record_error", kwargs={"error": error, **kw})

    def fix(self, **kw: Any) -> None:
        note(self.model, "fix", kwargs=kw)

    def raise_more(self, **kw: Any) -> None:
        note(self.model, "raise_more", kwargs=kw)
        self.raise_("finish", via="raise")
        self.send("start", via="send")

    def send_more(self, **kw: Any) -> None:
        note(self.model, "send_more", kwargs=kw)
        self.send("chain", via="send")
        self.raise_("repair", via="raise")


class Order(Logging, StateChart[Recorder]):
    """Nested compound states: entry and exit through several levels, a parent's transition
    beside a child's, a targetless one, and done.state when a compound reaches its final."""

    catch_errors_as_events = False

    class open(State.Compound):
        class shopping(State.Compound):
            browsing = State(initial=True)
            cart = State(enter="count")
            add = browsing.to(cart) | cart.to.itself(on="count")
            clear = cart.to(browsing)

        checkout = State()
        paid = State(final=True)
        proceed = shopping.to(checkout, cond="ready")
        pay = checkout.to(paid, unless="locked")
        ping = shopping.to(None, on="count")

    closed = State(final=True)
    cancel = open.to(closed)
    done_state_open = open.to(closed, on="count")

    def ready(self, **kw: Any) -> bool:
        note(self.model, "ready", kwargs=kw)
        return bool(self.model.ready)

    def count(self, event: Any, state: Any, **kw: Any) -> None:
        self.model.level += 1
        note(self.model, "count", event, state, kwargs=kw)


class Player(Logging, StateChart[Recorder]):
    """Parallel regions: one event handled in both, In() guards across regions, and
    done.state of the parallel state once every region is final."""

    catch_errors_as_events = False

    class playing(State.Parallel):
        class sound(State.Compound):
            muted = State(initial=True)
            loud = State()
            quiet = State(final=True)
            toggle = muted.to(loud) | loud.to(muted)
            fade = loud.to(quiet, cond="In('slow')")

        class speed(State.Compound):
            normal = State(initial=True)
            slow = State()
            stopped = State(final=True)
            toggle = normal.to(slow, cond="ready") | slow.to(normal)
            fade = slow.to(stopped)

    idle = State(initial=True)
    over = State(final=True)
    play = idle.to(playing)
    eject = playing.to(idle)
    done_state_playing = playing.to(over)


class Wizard(Logging, StateChart[Recorder]):
    """Shallow and deep history: leaving and coming back resumes where the steps were."""

    catch_errors_as_events = False

    class steps(State.Compound):
        class basics(State.Compound):
            name = State(initial=True)
            email = State()
            next_field = name.to(email) | email.to(name)

        extras = State()
        shallow = HistoryState()
        deep = HistoryState(type="deep")
        forward = basics.to(extras) | extras.to(basics)

    paused = State(initial=True)
    start = paused.to(steps)
    pause = steps.to(paused)
    resume = paused.to(steps.shallow)
    restore = paused.to(steps.deep, on="count")

    def count(self, **kw: Any) -> None:
        note(self.model, "count", kwargs=kw)


class Pipeline(Logging, StateChart[Recorder]):
    """Eventless chains (waiting on model flags), raise_ from an action, error.execution handled
    (errors caught as events, python-statemachine's default) and done.state with data."""

    class work(State.Compound):
        queued = State(initial=True)
        running = State()
        checked = State()
        finished = State(final=True, enter="result")
        queued.to(running, cond="locked")
        running.to(checked, on="run")
        checked.to(finished, cond="ready")
        retry = checked.to(queued, on="again")

    failed = State()
    complete = State(final=True)
    kick = work.to.itself(on="kick_off")
    done_state_work = work.to(complete, on="collect")
    error_execution = work.to(failed, on="record_error")
    reset = failed.to(work)

    def ready(self, **kw: Any) -> bool:
        note(self.model, "ready", kwargs=kw)
        return bool(self.model.ready)

    def run(self, **kw: Any) -> None:
        note(self.model, "run", kwargs=kw)

    def again(self, **kw: Any) -> None:
        note(self.model, "again", kwargs=kw)
        self.raise_("kick", via="raise")

    def kick_off(self, **kw: Any) -> None:
        note(self.model, "kick_off", kwargs=kw)

    def result(self, **kw: Any) -> dict[str, Any]:
        note(self.model, "result", kwargs=kw)
        return {"total": self.model.level}

    def collect(self, total: int = -1, **kw: Any) -> None:
        note(self.model, "collect", kwargs={"total": total, **kw})

    def record_error(self, error: Exception, **kw: Any) -> None:
        note(self.model, "record_error", kwargs={"error": error, **kw})


class Assembly(Logging, StateChart[Recorder]):
    """A flat chart whose states chain by eventless transitions (it runs on flat generated
    code): guards read model flags and one raises when ``locked``; actions of eventless steps
    raise internal events, send external ones and fail, by the count of loads so far."""

    catch_errors_as_events = False

    idle = State(initial=True)
    loaded = State(enter="on_loaded")
    checked = State()
    packed = State()
    shipped = State(final=True)
    faulty = State()

    load = idle.to(loaded, on="count") | faulty.to(loaded, on="count")
    loaded.to(checked, cond="inspect", on="stamp")
    loaded.to(faulty, cond="locked and not ready")
    checked.to(packed, unless="locked", on="wrap")
    packed.to(shipped, cond="ready and level > 2", after="report")
    nudge = checked.to(idle) | packed.to.itself(internal=True, on="count") | idle.to(faulty)
    back = packed.to(idle) | checked.to(loaded) | faulty.to(idle)
    failure = Event(
        loaded.to(faulty, on="record_error")
        | checked.to(faulty, on="record_error")
        | packed.to(faulty, on="record_error"),
        id="error.execution",
    )

    def count(self, **kw: Any) -> None:
        note(self.model, "count", kwargs=kw)
        self.model.level += 1

    def on_loaded(self, **kw: Any) -> None:
        note(self.model, "on_loaded", kwargs=kw)

    def inspect(self, **kw: Any) -> bool:
        note(self.model, "inspect", kwargs=kw)
        if self.model.locked and self.model.level % 2:
            raise Boom("inspect")
        return bool(self.model.ready)

    def stamp(self, **kw: Any) -> None:
        note(self.model, "stamp", kwargs=kw)
        if self.model.level % 2 == 0:
            self.raise_("nudge", via="raise")

    def wrap(self, **kw: Any) -> None:
        note(self.model, "wrap", kwargs=kw)
        if self.model.level % 3 == 0:
            self.send("back", via="send")
        if self.model.level % 5 == 1:
            raise Boom("wrap")

    def report(self, **kw: Any) -> None:
        note(self.model, "report", kwargs=kw)

    def record_error(self, error: Exception, **kw: Any) -> None:
        note(self.model, "record_error", kwargs={"error": error, **kw})


class Tally(Logging, StateChart[Recorder]):
    """A custom ``__init__`` keeping per-instance fields on the machine, as python-statemachine
    users write it: fields read by guards (by name and in an expression) and changed by
    actions, and one set after ``super().__init__`` (read by methods only)."""

    catch_errors_as_events = False

    counting = State(initial=True, enter="opened")
    full = State()
    closed = State(final=True)

    add = counting.to.itself(internal=True, on="put") | full.to.itself(internal=True)
    check = counting.to(full, cond="enough") | full.to(counting, cond="not enough")
    close = counting.to(closed, cond="open_for_business and not frozen") | full.to(closed)
    unfreeze = counting.to.itself(internal=True, on="thaw")

    def __init__(self, model: Any = None, *args: Any, limit: int = 2, **kwargs: Any) -> None:
        self.limit = limit
        self.items: list[int] = []
        self.open_for_business = True
        self.frozen = False
        super().__init__(model, *args, **kwargs)
        self.opened_at = len(self.model.log)

    def opened(self, **kw: Any) -> None:
        note(self.model, "opened", kwargs={"items": len(self.items), **kw})

    def put(self, amount: int = 1, **kw: Any) -> None:
        self.items.append(amount)
        self.frozen = len(self.items) > 3
        note(self.model, "put", kwargs={"items": list(self.items), **kw})

    def enough(self, **kw: Any) -> bool:
        note(self.model, "enough", kwargs=kw)
        return len(self.items) >= self.limit

    def thaw(self, **kw: Any) -> None:
        self.frozen = False
        note(self.model, "thaw", kwargs={"opened_at": self.opened_at, **kw})


def caught(chart: type[StateChart[Any]]) -> type[StateChart[Any]]:
    """The same chart with python-statemachine's default ``catch_errors_as_events = True``."""
    return type(f"{chart.__name__}Caught", (chart,), {"catch_errors_as_events": True})


TriageCaught = caught(Triage)
DoorCaught = caught(Door)
ShopCaught = caught(Shop)
RelayCaught = caught(Relay)
GateCaught = caught(Gate)

#: The charts the differential test runs, with their models and the events it sends.
DIFFERENTIAL = {
    "triage": (Triage, Recorder, ["route", "reset", "reject"]),
    "ticker": (Ticker, Recorder, ["tick", "bump", "stop"]),
    "door": (Door, Recorder, ["open", "close", "demolish"]),
    "gate": (Gate, Recorder, ["push", "pull", "finish", "lock"]),
    "shop": (Shop, ShopModel, ["add", "checkout", "pay", "back", "ping", "promo.code"]),
    "strict": (Strict, Recorder, ["switch", "hum", "warm"]),
    "relay": (Relay, Recorder, ["go", "hop"]),
    "fallible": (Fallible, Recorder, ["start", "finish", "chain", "repair"]),
    "triage-caught": (TriageCaught, Recorder, ["route", "reset", "reject"]),
    "door-caught": (DoorCaught, Recorder, ["open", "close", "demolish"]),
    "gate-caught": (GateCaught, Recorder, ["push", "pull", "finish", "lock"]),
    "shop-caught": (
        ShopCaught,
        ShopModel,
        ["add", "checkout", "pay", "back", "ping", "promo.code"],
    ),
    "relay-caught": (RelayCaught, Recorder, ["go", "hop"]),
    "tally": (Tally, Recorder, ["add", "check", "close", "unfreeze"]),
    "tally-caught": (caught(Tally), Recorder, ["add", "check", "close", "unfreeze"]),
}


#: Statecharts (compound, parallel and history states, eventless transitions) the
#: differential test runs too; diagrams do not draw hierarchy yet, so they are kept apart.
class Oven(Logging, StateChart[Recorder]):
    """Delayed events: entering a state schedules the next steps (cancellable by their
    send_id, one declared with a delay on the event); baking cancels the smoke when the model
    is ready, smoke cancels the rest, and a compound's final state leads back through
    done.state."""

    class cooking(State.Compound):
        heating = State(initial=True)
        baking = State()
        ready = State(final=True)
        warm = heating.to(baking)
        ding = baking.to(ready)
        poke = heating.to.itself(on="prod") | baking.to.itself(on="prod")

    off = State(initial=True)
    served = State(final=True)
    start = off.to(cooking)
    smoke = cooking.to(off, on="halt")
    stop = cooking.to(off, on="halt")
    done_state_cooking = cooking.to(off)
    serve = off.to(served)
    later = Event(off.to(cooking), delay=300)

    def on_enter_heating(self, **kw: Any) -> None:
        note(self.model, "on_enter_heating", kwargs=kw)
        self.send("warm", delay=100, send_id="warm")
        self.send("smoke", delay=250, send_id="smoke")

    def on_enter_baking(self, **kw: Any) -> None:
        note(self.model, "on_enter_baking", kwargs=kw)
        if self.model.ready:
            self.cancel_event("smoke")
        self.send("ding", delay=200, send_id="ding")

    def prod(self, **kw: Any) -> None:
        note(self.model, "prod", kwargs=kw)
        if "marker" not in kw:
            self.send("poke", delay=50, marker="again")

    def halt(self, **kw: Any) -> None:
        note(self.model, "halt", kwargs=kw)
        self.cancel_event("warm")
        self.cancel_event("ding")


#: Charts with delayed events, run on a virtual clock (python-statemachine on a fake one).
TIMED = {
    "oven": (Oven, Recorder, ["start", "stop", "poke", "later", "warm", "serve"]),
}


HIERARCHICAL = {
    "order": (Order, Recorder, ["add", "clear", "proceed", "pay", "ping", "cancel"]),
    "order-caught": (caught(Order), Recorder, ["add", "clear", "proceed", "pay", "ping"]),
    "player": (Player, Recorder, ["play", "toggle", "fade", "eject"]),
    "wizard": (Wizard, Recorder, ["start", "next_field", "forward", "pause", "resume", "restore"]),
    "pipeline": (Pipeline, Recorder, ["kick", "retry", "reset"]),
    # flat, but the diagram tests compare only charts without eventless transitions
    "assembly": (Assembly, Recorder, ["load", "nudge", "back"]),
    "assembly-caught": (caught(Assembly), Recorder, ["load", "nudge", "back"]),
}


def machine_flags(chart: type[StateChart[Any]]) -> type[StateChart[Any]]:
    """The same chart with python-statemachine's ``StateMachine`` flags: events no transition
    takes refused, self transitions without entries, no errors caught, the configuration
    updated at once."""
    flags = {
        "allow_event_without_transition": False,
        "enable_self_transition_entries": False,
        "catch_errors_as_events": False,
        "atomic_configuration_update": True,
    }
    return type(f"{chart.__name__}Machine", (chart,), flags)


#: The hierarchical charts again with the other flags: errors caught as events (entry, exit
#: and ``after`` errors inside compound and parallel states) and ``StateMachine``'s flags.
VARIANTS = {
    "player-caught": (caught(Player), Recorder, HIERARCHICAL["player"][2]),
    "wizard-caught": (caught(Wizard), Recorder, HIERARCHICAL["wizard"][2]),
    "order-machine": (machine_flags(Order), Recorder, HIERARCHICAL["order"][2]),
    "player-machine": (machine_flags(Player), Recorder, HIERARCHICAL["player"][2]),
    "pipeline-machine": (machine_flags(Pipeline), Recorder, HIERARCHICAL["pipeline"][2]),
    "wizard-machine": (machine_flags(Wizard), Recorder, HIERARCHICAL["wizard"][2]),
    "triage-machine": (machine_flags(Triage), Recorder, DIFFERENTIAL["triage"][2]),
}


def media_player(history: str) -> type[StateChart]:  # type: ignore[type-arg]
    """A media player whose ``on`` remembers its parallel configuration in a history state
    of the given type (``"deep"`` or ``"shallow"``); plain, with no recorder."""

    class Player(StateChart):  # type: ignore[type-arg]
        off = State(initial=True)

        class on(State.Compound):
            class playing(State.Parallel):
                class audio(State.Compound):
                    loud = State(initial=True)
                    quiet = State()

                    hush = loud.to(quiet)

                class video(State.Compound):
                    color = State(initial=True)
                    mono = State()

                    gray = color.to(mono)

            paused = State()
            h = HistoryState(type=history)

            pause = playing.to(paused)
            resume = paused.to(h)

        power = off.to(on) | on.to(off)

    return Player


class EngineAdapter:
    """A correct system under test for any chart: python-statemachine's own engine running
    the class, one machine per key."""

    def __init__(self, cls: type[StateChart]) -> None:  # type: ignore[type-arg]
        self.cls = cls
        self.machines: dict[str, Any] = {}

    def create(self, key: str) -> None:
        self.machines[key] = self.cls()

    def send(self, key: str, event: str, payload: Mapping[str, Any]) -> None:
        self.machines[key].send(event, **payload)

    def configuration(self, key: str) -> set[str]:
        return {state.id for state in self.machines[key].configuration}

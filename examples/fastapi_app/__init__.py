"""A FastAPI app that enqueues jobs with cogworker's `AsyncClient`.

    uvicorn examples.fastapi_app.web:app       # the web app
    cogworker work examples.fastapi_app.jobs   # its worker

Both find Redis in `$COGWORKER_REDIS_URL`.  The jobs live in a module of
their own, so the worker imports them without the web app.
"""

"""REST handlers for what the service learned: preferences, lessons, and the distiller's
failures (shapes: server/schemas/learning.py)."""

from __future__ import annotations

from starlette.responses import JSONResponse

from server.adapters.http_edge import Handler
from server.core.models.output import to_json
from server.schemas import learning
from server.service.face import MemoryApi


async def preferences(service: MemoryApi, query: learning.PreferencesQuery) -> JSONResponse:
    project = query.project
    return JSONResponse(to_json(await service.preferences(project)))


async def list_lessons(service: MemoryApi, query: learning.LessonsQuery) -> JSONResponse:
    project = query.project
    found = await service.lessons(project, include_inactive=query.include_inactive)
    return JSONResponse({"lessons": to_json(found)})


async def create_lesson(service: MemoryApi, body: learning.NewLesson) -> JSONResponse:
    return JSONResponse(to_json(await service.add_lesson(body.draft())), status_code=201)


async def update_lesson(
    service: MemoryApi, lesson_id: int, body: learning.LessonEdit
) -> JSONResponse:
    return JSONResponse(to_json(await service.update_lesson(lesson_id, body.change())))


async def reset_failures(service: MemoryApi, body: learning.ResetFailures) -> JSONResponse:
    return JSONResponse({"reset": await service.reset_distill_failures(body.session or None)})


HANDLERS: dict[str, Handler] = {
    "preferences": preferences,
    "listLessons": list_lessons,
    "createLesson": create_lesson,
    "updateLesson": update_lesson,
    "resetDistillFailures": reset_failures,
}
